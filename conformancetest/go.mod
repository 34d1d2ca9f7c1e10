module github.com/petinventory/petinventory/conformancetest

go 1.25.0

require github.com/anishathalye/porcupine v1.3.1
