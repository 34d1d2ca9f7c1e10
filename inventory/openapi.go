package inventory

import (
	_ "embed" // for the OpenAPI document
	"slices"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document (YAML) of the API as this
// package serves it: both operations with every status, the Error codes,
// the headers (Allow, WWW-Authenticate, Retry-After, Cache-Control,
// X-Content-Type-Options) and the bearer security scheme. Servers list
// the base with its /v1 segment. Each call returns a new copy, the
// caller's to keep or change.
//
// Serve it next to the routes, outside the versioned prefix, for tools
// and clients:
//
//	doc := inventory.OpenAPI()
//	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
//		w.Header().Set("Content-Type", "application/yaml")
//		w.Write(doc)
//	})
func OpenAPI() []byte {
	return slices.Clone(openAPI)
}
