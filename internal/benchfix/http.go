package benchfix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/petinventory/petinventory/inventory"
)

// Side is one side of a comparison on a net/http-compatible framework
// (net/http itself, Gin): a name ("lib", "bare", …) and a function that
// builds its handler over items, mounted under /v1.
type Side struct {
	Name    string
	Handler func(b *testing.B, items []inventory.Item) http.Handler
}

// The headers a list answer carries besides those of every answer; the
// bare sides send them too, BareETag as long as the API's tag.
const (
	ListCacheControl = "private, no-cache"
	BareETag         = `"0123456789abcdef0123456789abcdef"`
)

// Check fails b unless w holds a 200 with body want and the headers every
// inventory response carries, and for a list (what "list") those of a
// list.
func Check(b *testing.B, side, what string, w *Writer, want []byte) {
	b.Helper()
	if w.Status != http.StatusOK {
		b.Fatalf("%s %s: status %d, body %s", side, what, w.Status, w.Body)
	}
	if !bytes.Equal(w.Body, want) {
		b.Fatalf("%s %s: body\n%.200s\nwant\n%.200s", side, what, w.Body, want)
	}
	headers := map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         strconv.Itoa(len(want)),
	}
	if what == "list" {
		headers["Cache-Control"], headers["Vary"] = ListCacheControl, "Accept-Encoding"
		if len(w.Header().Get("Etag")) != len(BareETag) {
			b.Fatalf("%s %s: ETag %q, want one as long as %s", side, what, w.Header().Get("Etag"), BareETag)
		}
	}
	for name, value := range headers {
		if got := w.Header().Get(name); got != value {
			b.Fatalf("%s %s: %s is %q, want %q", side, what, name, got, value)
		}
	}
}

// BenchmarkList lists 10, 100 and 10 000 items through every side, after
// checking that each answers 200 with the same bytes encoding/json gives.
func BenchmarkList(b *testing.B, sides []Side) {
	for _, side := range sides {
		for _, n := range ListSizes {
			b.Run(fmt.Sprintf("%s/items=%d", side.Name, n), func(b *testing.B) {
				items := Items(n)
				want, err := json.Marshal(items)
				if err != nil {
					b.Fatal(err)
				}
				h := side.Handler(b, items)
				req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
				req.Header.Set("Authorization", Bearer)
				w := NewWriter()
				h.ServeHTTP(w, req)
				Check(b, side.Name, "list", w, want)

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

// BenchmarkUpdate sets quantities through every side, rotating over
// UpdatePets pets and Bodies quantities, after checking the first answers.
func BenchmarkUpdate(b *testing.B, sides []Side) {
	for _, side := range sides {
		b.Run(side.Name, func(b *testing.B) {
			items := Items(100)
			h := side.Handler(b, items)
			// One request per pet, reused; bodies set a different quantity
			// each time.
			reqs := make([]*http.Request, UpdatePets)
			readers := make([]*Body, UpdatePets)
			for i := range reqs {
				readers[i] = &Body{}
				reqs[i] = httptest.NewRequest(http.MethodPatch, "/v1/inventory/"+strconv.Itoa(i*11+1), nil)
				reqs[i].Header.Set("Authorization", Bearer)
				reqs[i].Header.Set("Content-Type", "application/json")
				reqs[i].Body = readers[i]
			}
			bodies := make([][]byte, Bodies)
			for i := range bodies {
				bodies[i] = []byte(`{"quantity":` + strconv.Itoa(i*7919%100000) + `}`)
			}
			send := func(w *Writer, i int) {
				p := i % UpdatePets
				body := bodies[i%Bodies]
				readers[p].Reset(body)
				reqs[p].ContentLength = int64(len(body))
				w.Reset()
				h.ServeHTTP(w, reqs[p])
			}

			w := NewWriter()
			for i := range UpdatePets + 1 {
				send(w, i)
				want := items[(i%UpdatePets)*11]
				want.Quantity = i * 7919 % 100000
				wantBody, _ := json.Marshal(want)
				Check(b, side.Name, "update", w, wantBody)
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
