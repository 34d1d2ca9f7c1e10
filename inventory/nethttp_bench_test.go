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
// A third side, "bare+sha256", is the bare handler with the library's way
// of checking the key instead of the plain comparison: the SHA-256 digest
// of the presented key compared in constant time with the configured key's
// (about 100 ns). lib against it shows what the library costs beyond that
// security measure, which the bare handler skips.
//
// Every top-level name here starts with "bench": other test files of the
// package are written separately.

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

const (
	benchKey    = "bench-key-0123456789"
	benchBearer = "Bearer " + benchKey
	// benchUpdatePets is how many pets the update benchmarks rotate over,
	// and benchBodies how many distinct quantities; the two are coprime so
	// that (pet, quantity) pairs keep changing.
	benchUpdatePets = 8
	benchBodies     = 251
)

var benchListSizes = []int{10, 100, 10000}

// benchKeyDigest is the SHA-256 digest of benchKey, for bare+sha256.
var benchKeyDigest = sha256.Sum256([]byte(benchKey))

// benchSHA256Authorized is the key check of bare+sha256: as the library's
// WithAPIKeys, the digest of the bearer key compared in constant time.
func benchSHA256Authorized(header string) bool {
	key, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	d := sha256.Sum256([]byte(key))
	return subtle.ConstantTimeCompare(d[:], benchKeyDigest[:]) == 1
}

// benchItems returns n valid items with pet ids 1..n, varied quantities
// and every status.
func benchItems(n int) []inventory.Item {
	statuses := []inventory.Status{inventory.StatusAvailable, inventory.StatusPending, inventory.StatusSold}
	items := make([]inventory.Item, n)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i + 1), Quantity: (i * 37) % 1000, Status: statuses[i%3]}
	}
	return items
}

// benchWriter is an http.ResponseWriter that keeps what it is given and can
// be reset without allocating, so that neither side's figures are made of
// httptest.ResponseRecorder's allocations.
type benchWriter struct {
	header http.Header
	status int
	body   []byte
}

func newBenchWriter() *benchWriter { return &benchWriter{header: make(http.Header, 8)} }

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

func (w *benchWriter) reset() {
	clear(w.header)
	w.status = 0
	w.body = w.body[:0]
}

// benchBody is a request body that can be refilled between iterations.
type benchBody struct{ bytes.Reader }

func (*benchBody) Close() error { return nil }

func benchLibHandler(b *testing.B, items []inventory.Item) http.Handler {
	b.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(benchKey))
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
// comparison of the Authorization header for benchSHA256Authorized.
func benchBareMux(items []inventory.Item, withSHA256 bool) http.Handler {
	list, err := json.Marshal(items)
	if err != nil {
		panic(err)
	}
	listLength := strconv.Itoa(len(list))
	var mu sync.Mutex
	byID := make(map[int64]inventory.Item, len(items))
	for _, it := range items {
		byID[it.PetID] = it
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/inventory", func(w http.ResponseWriter, r *http.Request) {
		if withSHA256 {
			if !benchSHA256Authorized(r.Header.Get("Authorization")) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		} else if r.Header.Get("Authorization") != benchBearer {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		benchSetHeaders(w, listLength)
		_, _ = w.Write(list)
	})
	mux.HandleFunc("PATCH /v1/inventory/{petId}", func(w http.ResponseWriter, r *http.Request) {
		if withSHA256 {
			if !benchSHA256Authorized(r.Header.Get("Authorization")) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		} else if r.Header.Get("Authorization") != benchBearer {
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
		mu.Lock()
		it, ok := byID[id]
		if ok {
			it.Quantity = in.Quantity
			byID[id] = it
		}
		mu.Unlock()
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
func benchCheck(b *testing.B, side, what string, w *benchWriter, want []byte) {
	b.Helper()
	if w.status != http.StatusOK {
		b.Fatalf("%s %s: status %d, body %s", side, what, w.status, w.body)
	}
	if !bytes.Equal(w.body, want) {
		b.Fatalf("%s %s: body\n%.200s\nwant\n%.200s", side, what, w.body, want)
	}
	for name, value := range map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         strconv.Itoa(len(want)),
	} {
		if got := w.header.Get(name); got != value {
			b.Fatalf("%s %s: %s is %q, want %q", side, what, name, got, value)
		}
	}
}

type benchSide struct {
	name    string
	handler func(*testing.B, []inventory.Item) http.Handler
}

var benchSides = []benchSide{
	{"lib", benchLibHandler},
	{"bare", benchBareHandler},
	{"bare+sha256", benchBareSHA256Handler},
}

func BenchmarkList(b *testing.B) {
	for _, side := range benchSides {
		for _, n := range benchListSizes {
			b.Run(fmt.Sprintf("%s/items=%d", side.name, n), func(b *testing.B) {
				items := benchItems(n)
				want, err := json.Marshal(items)
				if err != nil {
					b.Fatal(err)
				}
				h := side.handler(b, items)
				req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
				req.Header.Set("Authorization", benchBearer)
				w := newBenchWriter()
				h.ServeHTTP(w, req)
				benchCheck(b, side.name, "list", w, want)

				b.ReportAllocs()
				for b.Loop() {
					w.reset()
					h.ServeHTTP(w, req)
					if w.status != http.StatusOK {
						b.Fatalf("status %d", w.status)
					}
				}
			})
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, side := range benchSides {
		b.Run(side.name, func(b *testing.B) {
			items := benchItems(100)
			h := side.handler(b, items)
			// One request per pet, reused; bodies set a different quantity
			// each time.
			reqs := make([]*http.Request, benchUpdatePets)
			readers := make([]*benchBody, benchUpdatePets)
			for i := range reqs {
				readers[i] = &benchBody{}
				reqs[i] = httptest.NewRequest(http.MethodPatch, "/v1/inventory/"+strconv.Itoa(i*11+1), nil)
				reqs[i].Header.Set("Authorization", benchBearer)
				reqs[i].Header.Set("Content-Type", "application/json")
				reqs[i].Body = readers[i]
			}
			bodies := make([][]byte, benchBodies)
			for i := range bodies {
				bodies[i] = []byte(`{"quantity":` + strconv.Itoa(i*7919%100000) + `}`)
			}
			send := func(w *benchWriter, i int) {
				p := i % benchUpdatePets
				body := bodies[i%benchBodies]
				readers[p].Reset(body)
				reqs[p].ContentLength = int64(len(body))
				w.reset()
				h.ServeHTTP(w, reqs[p])
			}

			w := newBenchWriter()
			for i := range benchUpdatePets + 1 {
				send(w, i)
				want := items[(i%benchUpdatePets)*11]
				want.Quantity = i * 7919 % 100000
				wantBody, _ := json.Marshal(want)
				benchCheck(b, side.name, "update", w, wantBody)
			}

			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				send(w, i)
				if w.status != http.StatusOK {
					b.Fatalf("status %d: %s", w.status, w.body)
				}
			}
		})
	}
}
