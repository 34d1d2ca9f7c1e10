module github.com/petinventory/petinventory

go 1.25.0
