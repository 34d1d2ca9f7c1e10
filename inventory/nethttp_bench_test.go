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
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
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
			if !benchfix.SHA256Authorized(r.Header.Get("Authorization")) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		} else if r.Header.Get("Authorization") != benchfix.Bearer {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		benchSetHeaders(w, listLength)
		_, _ = w.Write(list)
	})
	mux.HandleFunc("PATCH /v1/inventory/{petId}", func(w http.ResponseWriter, r *http.Request) {
		if withSHA256 {
			if !benchfix.SHA256Authorized(r.Header.Get("Authorization")) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		} else if r.Header.Get("Authorization") != benchfix.Bearer {
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
func benchCheck(b *testing.B, side, what string, w *benchfix.Writer, want []byte) {
	b.Helper()
	if w.Status != http.StatusOK {
		b.Fatalf("%s %s: status %d, body %s", side, what, w.Status, w.Body)
	}
	if !bytes.Equal(w.Body, want) {
		b.Fatalf("%s %s: body\n%.200s\nwant\n%.200s", side, what, w.Body, want)
	}
	for name, value := range map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         strconv.Itoa(len(want)),
	} {
		if got := w.Header().Get(name); got != value {
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
		for _, n := range benchfix.ListSizes {
			b.Run(fmt.Sprintf("%s/items=%d", side.name, n), func(b *testing.B) {
				items := benchfix.Items(n)
				want, err := json.Marshal(items)
				if err != nil {
					b.Fatal(err)
				}
				h := side.handler(b, items)
				req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
				req.Header.Set("Authorization", benchfix.Bearer)
				w := benchfix.NewWriter()
				h.ServeHTTP(w, req)
				benchCheck(b, side.name, "list", w, want)

				b.ReportAllocs()
				for b.Loop() {
					w.Reset()
					h.ServeHTTP(w, req)
					if w.Status != http.StatusOK {
						b.Fatalf("status %d", w.Status)
					}
				}
			})
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, side := range benchSides {
		b.Run(side.name, func(b *testing.B) {
			items := benchfix.Items(100)
			h := side.handler(b, items)
			// One request per pet, reused; bodies set a different quantity
			// each time.
			reqs := make([]*http.Request, benchfix.UpdatePets)
			readers := make([]*benchfix.Body, benchfix.UpdatePets)
			for i := range reqs {
				readers[i] = &benchfix.Body{}
				reqs[i] = httptest.NewRequest(http.MethodPatch, "/v1/inventory/"+strconv.Itoa(i*11+1), nil)
				reqs[i].Header.Set("Authorization", benchfix.Bearer)
				reqs[i].Header.Set("Content-Type", "application/json")
				reqs[i].Body = readers[i]
			}
			bodies := make([][]byte, benchfix.Bodies)
			for i := range bodies {
				bodies[i] = []byte(`{"quantity":` + strconv.Itoa(i*7919%100000) + `}`)
			}
			send := func(w *benchfix.Writer, i int) {
				p := i % benchfix.UpdatePets
				body := bodies[i%benchfix.Bodies]
				readers[p].Reset(body)
				reqs[p].ContentLength = int64(len(body))
				w.Reset()
				h.ServeHTTP(w, reqs[p])
			}

			w := benchfix.NewWriter()
			for i := range benchfix.UpdatePets + 1 {
				send(w, i)
				want := items[(i%benchfix.UpdatePets)*11]
				want.Quantity = i * 7919 % 100000
				wantBody, _ := json.Marshal(want)
				benchCheck(b, side.name, "update", w, wantBody)
			}

			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				send(w, i)
				if w.Status != http.StatusOK {
					b.Fatalf("status %d: %s", w.Status, w.Body)
				}
			}
		})
	}
}
