package inventory_test

import (
	"bytes"
	"testing"

	"github.com/petinventory/petinventory/inventory"
)

// OpenAPI gives each caller its own copy: changing one changes no other.
func TestOpenAPIIsACopy(t *testing.T) {
	a := inventory.OpenAPI()
	if !bytes.HasPrefix(a, []byte("openapi: 3.1")) {
		t.Fatalf("OpenAPI() begins %.40q; want the YAML document", a)
	}
	want := bytes.Clone(a)
	for i := range a {
		a[i] = 'x'
	}
	if b := inventory.OpenAPI(); !bytes.Equal(b, want) {
		t.Errorf("after a caller changed its copy, OpenAPI() begins %.40q", b)
	}
}
