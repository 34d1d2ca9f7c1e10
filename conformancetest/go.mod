module github.com/petinventory/petinventory/conformancetest

go 1.26
