package benchfix

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// LargeList returns an API (key "k") over a memstore of 5 000 pets, a list
// large enough that the API answers it in pieces shared by every list in
// flight, and check, which lists url (the API's list route on a real
// socket) three times: from the store, from the cache, and after an
// update; each time as identity, as gzip decoded by Go's client
// transparently, as gzip decoded here, and conditionally with the
// previous answer's ETag. check fails t unless each answer is 200 with the
// whole inventory, in order, and its Content-Length, or a 304 without a
// body exactly when nothing changed since that ETag: what each adapter's
// writing of a list must give.
func LargeList(t *testing.T) (api *inventory.API, check func(url string)) {
	t.Helper()
	items := make([]inventory.Item, 5000)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i*3 + 1), Quantity: i % 100, Status: inventory.StatusPending}
	}
	store, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	if api, err = inventory.New(store, inventory.WithAPIKeys("k")); err != nil {
		t.Fatal(err)
	}
	get := func(url string, h http.Header) (*http.Response, []byte) {
		t.Helper()
		return Get(t, url, h)
	}
	return api, func(url string) {
		t.Helper()
		var tag, gzTag string
		for round := range 3 {
			if round == 2 {
				items[4000].Quantity = 77
				if _, err := store.SetQuantity(context.Background(), items[4000].PetID, 77); err != nil {
					t.Fatal(err)
				}
			}
			want, _ := json.Marshal(items)
			if round > 0 { // the previous round's tags: 304 unless the update came between
				wantStatus := http.StatusNotModified
				if round == 2 {
					wantStatus = http.StatusOK
				}
				for _, h := range []http.Header{{"If-None-Match": {tag}, "Accept-Encoding": {"identity"}}, {"If-None-Match": {gzTag}, "Accept-Encoding": {"gzip"}}} {
					resp, body := get(url, h)
					if resp.StatusCode != wantStatus || (wantStatus == 304 && len(body) != 0) || resp.Header.Get("Vary") != "Accept-Encoding" {
						t.Fatalf("round %d, %v: %d, %d bytes, headers %v; want %d", round, h, resp.StatusCode, len(body), resp.Header, wantStatus)
					}
				}
			}
			resp, body := get(url, http.Header{"Accept-Encoding": {"identity"}})
			if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.ContentLength != int64(len(want)) || resp.Header.Get("Content-Encoding") != "" {
				t.Fatalf("round %d: %d, %d bytes (Content-Length %d, headers %v); want 200 and the %d bytes of the inventory", round, resp.StatusCode, len(body), resp.ContentLength, resp.Header, len(want))
			}
			tag = resp.Header.Get("ETag")
			if resp, body := get(url, http.Header{}); !resp.Uncompressed || !bytes.Equal(body, want) {
				t.Fatalf("round %d, Go's client: %d, %d bytes, decoded from gzip: %v; want the inventory decoded from gzip", round, resp.StatusCode, len(body), resp.Uncompressed)
			}
			resp, body = get(url, http.Header{"Accept-Encoding": {"gzip"}})
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil || resp.ContentLength != int64(len(body)) || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("round %d, gzip: %d, %d bytes (Content-Length %d, headers %v): %v", round, resp.StatusCode, len(body), resp.ContentLength, resp.Header, err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, want) {
				t.Fatalf("round %d: the gzip list decodes to %d bytes (%v); want the %d of the inventory", round, len(plain), err, len(want))
			}
			gzTag = resp.Header.Get("ETag")
			if tag == "" || gzTag == "" || tag == gzTag {
				t.Fatalf("round %d: ETag %q identity, %q gzip; want two different tags", round, tag, gzTag)
			}
		}
	}
}

// Get sends GET url with headers h and the fixtures' key ("k") through
// http.DefaultClient, and returns the answer with its body read whole.
// Go's transport decodes a gzip body it asked for itself (no
// Accept-Encoding in h) and reports it in Uncompressed.
func Get(t testing.TB, url string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
