package inventory_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// BenchmarkListStaleIfError measures what WithStaleIfError costs a list
// while the store is healthy: the same list of 100 pets on memstore
// through net/http's ServeMux, with the option ("on": WithStaleIfError of
// 30 s) and without it ("off"), both with a store timeout of 2 s, strict
// (every list asks the store what changed, the path an outage would
// fail) and under a staleness bound of 50 ms (lists from memory). Setup
// checks that both sides answer 200 with the same bytes, "on" with its
// stale-if-error directive and neither with Age. Read off ns/op ÷ on
// ns/op within one run, beside off ns/op ÷ off2 ns/op, the same API
// built twice: the noise of the machine, the control the first ratio is
// read against. scripts/bench/staleiferror.sh runs it in rounds.
//
//	go test ./inventory -run '^$' -bench ListStaleIfError -benchmem -count 1
func BenchmarkListStaleIfError(b *testing.B) {
	items := benchfix.Items(100)
	for _, mode := range []struct {
		name string
		opts []inventory.Option
	}{{"strict", nil}, {"bound50ms", []inventory.Option{inventory.WithMaxStaleness(50 * time.Millisecond)}}} {
		var want []byte
		for _, side := range []struct {
			name, cacheControl string
			opts               []inventory.Option
		}{
			{"off", "private, no-cache", nil},
			{"on", "private, no-cache, stale-if-error=30", []inventory.Option{inventory.WithStaleIfError(30 * time.Second)}},
			{"off2", "private, no-cache", nil}, // the control: off again, a second API
		} {
			b.Run(mode.name+"/"+side.name, func(b *testing.B) {
				store, err := memstore.New(items...)
				if err != nil {
					b.Fatal(err)
				}
				opts := append([]inventory.Option{inventory.WithAPIKeys(benchfix.Key), inventory.WithStoreTimeout(2 * time.Second)}, mode.opts...)
				api, err := inventory.New(store, append(opts, side.opts...)...)
				if err != nil {
					b.Fatal(err)
				}
				mux := http.NewServeMux()
				if err := api.Register(mux, "/v1"); err != nil {
					b.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
				req.Header.Set("Authorization", benchfix.Bearer)
				w := benchfix.NewWriter()
				mux.ServeHTTP(w, req)
				if w.Status != http.StatusOK || w.Header().Get("Cache-Control") != side.cacheControl || w.Header().Get("Age") != "" {
					b.Fatalf("%s: %d %v", side.name, w.Status, w.Header())
				}
				if want == nil {
					want = bytes.Clone(w.Body)
				} else if !bytes.Equal(w.Body, want) {
					b.Fatalf("%s answers other bytes than off", side.name)
				}
				b.ReportAllocs()
				for b.Loop() {
					w.Reset()
					mux.ServeHTTP(w, req)
					if w.Status != http.StatusOK {
						b.Fatalf("status %d", w.Status)
					}
				}
			})
		}
	}
}
