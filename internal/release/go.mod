module github.com/petinventory/petinventory/internal/release

go 1.26.0

require (
	golang.org/x/mod v0.42.0
	gopkg.in/yaml.v3 v3.0.1
)
