module github.com/petinventory/petinventory/examples

go 1.26

require (
	github.com/petinventory/petinventory v0.0.0-00010101000000-000000000000
	github.com/petinventory/petinventory/transport/gin v0.0.0-00010101000000-000000000000
	github.com/petinventory/petinventory/transport/fiber v0.0.0-00010101000000-000000000000
	github.com/petinventory/petinventory/storage/redis v0.0.0-00010101000000-000000000000
)

replace (
	github.com/petinventory/petinventory => ../
	github.com/petinventory/petinventory/transport/gin => ../transport/gin
	github.com/petinventory/petinventory/transport/fiber => ../transport/fiber
	github.com/petinventory/petinventory/storage/redis => ../storage/redis
)
