package inventory_test

// The benchmarks measure what the library costs a net/http host: each one
// runs the API mounted as the docs say (api.Register(mux, "/v1") on a
// ServeMux, "lib") beside the least a net/http handler on the same
// ServeMux can do for the same work ("bare"), in the same run, through the
// same entry point (mux.ServeHTTP with one reusable ResponseWriter, no
// sockets), so that lib/bare is the ratio to read:
//
//	go test -run '^$' -bench . -benchmem -count 3
//
// The bare handlers do the work the contract asks for and nothing more:
// check the bearer header (a plain comparison), then for a list write
// bytes encoded once in advance, and for an update parse the petId, decode
// {"quantity":n} with encoding/json, set a map entry under a mutex and
// encode the item with encoding/json. Both sides set the same response
// headers (Content-Type, Cache-Control, X-Content-Type-Options,
// Content-Length), and setup checks that both answer 200 with the same
// bytes, so neither side can be measuring an error path.
//
// A third side, "bare+sha256", is the bare handler with a constant-time
// key check instead of the plain comparison: the SHA-256 digest of the
// presented key compared in constant time with the configured key's (about
// 100 ns), the textbook way, which the library used at first. It shows
// what such a check costs; the bare handler skips it.
//
// Every top-level name here starts with "bench": other test files of the
// package are written separately.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

func benchLibHandler(b *testing.B, items []inventory.Item) http.Handler {
	b.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(benchfix.Key))
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		b.Fatal(err)
	}
	return mux
}

// benchSetHeaders sets the headers every inventory response carries.
func benchSetHeaders(w http.ResponseWriter, contentLength string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", contentLength)
}

func benchBareHandler(_ *testing.B, items []inventory.Item) http.Handler {
	return benchBareMux(items, false)
}

func benchBareSHA256Handler(_ *testing.B, items []inventory.Item) http.Handler {
	return benchBareMux(items, true)
}

// benchBareMux returns the bare handlers; withSHA256 swaps the plain
// comparison of the Authorization header for benchfix.SHA256Authorized.
func benchBareMux(items []inventory.Item, withSHA256 bool) http.Handler {
	inv := benchfix.NewBareInventory(items)
	listLength := strconv.Itoa(len(inv.List))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/inventory", func(w http.ResponseWriter, r *http.Request) {
		if !benchfix.Authorized(r.Header.Get("Authorization"), withSHA256) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		benchSetHeaders(w, listLength)
		h := w.Header()
		h.Set("Cache-Control", benchfix.ListCacheControl)
		h.Set("Etag", benchfix.BareETag)
		h.Set("Vary", "Accept-Encoding")
		_, _ = w.Write(inv.List)
	})
	mux.HandleFunc("PATCH /v1/inventory/{petId}", func(w http.ResponseWriter, r *http.Request) {
		if !benchfix.Authorized(r.Header.Get("Authorization"), withSHA256) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id, err := strconv.ParseInt(r.PathValue("petId"), 10, 64)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var in struct {
			Quantity int `json:"quantity"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Quantity < 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		it, ok := inv.Set(id, in.Quantity)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		out, err := json.Marshal(it)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		benchSetHeaders(w, strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	})
	return mux
}

// benchCheck fails b unless w holds a 200 with exactly want and the
// contract's headers.
var benchSides = []benchfix.Side{
	{Name: "lib", Handler: benchLibHandler},
	{Name: "bare", Handler: benchBareHandler},
	{Name: "bare+sha256", Handler: benchBareSHA256Handler},
}

func BenchmarkList(b *testing.B)   { benchfix.BenchmarkList(b, benchSides) }
func BenchmarkUpdate(b *testing.B) { benchfix.BenchmarkUpdate(b, benchSides) }
