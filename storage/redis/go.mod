module github.com/petinventory/petinventory/storage/redis

go 1.26

require (
	github.com/petinventory/petinventory v0.0.0-00010101000000-000000000000
)

replace (
	github.com/petinventory/petinventory => ../../
)
