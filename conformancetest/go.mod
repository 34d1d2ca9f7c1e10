module github.com/petinventory/petinventory/conformancetest

go 1.25.0
