package inventory_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
)

// get lists over a real socket with the given request headers, and
// returns the status, the headers and the body (decoded when gzip).
func get(t *testing.T, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if r, err = gzip.NewReader(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// With a bound no test outlives, an update is not in the lists after it
// (they are answered from the state read before it) until a list asks
// for no-cache; gzip and 304 follow the state each list is answered
// from. Over a socket, through ServeHTTP.
func TestMaxStalenessOverHTTP(t *testing.T) {
	store := newStore(t)
	var items []inventory.Item
	for id := int64(1); id <= 200; id++ { // large enough for gzip
		items = append(items, inventory.Item{PetID: id, Quantity: 5, Status: inventory.StatusAvailable})
	}
	if err := store.Put(context.Background(), items...); err != nil {
		t.Fatal(err)
	}
	api := newAPI(t, store, inventory.WithMaxStaleness(time.Hour))
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	list := srv.URL + "/v1/inventory"

	_, h, before := get(t, list)
	etag := h.Get("Etag")
	_, gzh, gzBefore := get(t, list, "Accept-Encoding", "gzip")
	if gzh.Get("Content-Encoding") != "gzip" || gzBefore != before {
		t.Fatalf("a gzip list: Content-Encoding %q, body equal to identity's: %v", gzh.Get("Content-Encoding"), gzBefore == before)
	}
	if status, _, _ := serve(api, patch("1", `{"quantity":42}`)); status != 200 {
		t.Fatalf("update: %d", status)
	}
	if status, _, body := get(t, list); status != 200 || body != before {
		t.Fatalf("a list within the bound after an update: %d, the held state: %v; want the held state", status, body == before)
	}
	if status, _, body := get(t, list, "Accept-Encoding", "gzip"); status != 200 || body != before {
		t.Fatalf("a gzip list within the bound: %d, the held state: %v", status, body == before)
	}
	if status, _, body := get(t, list, "If-None-Match", etag); status != 304 || body != "" {
		t.Fatalf("a conditional list within the bound: %d %q; want 304 (the held state is what would be sent)", status, body)
	}
	if status, _, body := get(t, list, "If-None-Match", etag, "Cache-Control", "no-cache"); status != 200 || !strings.Contains(body, `{"petId":1,"quantity":42,`) {
		t.Fatalf("a conditional no-cache list after an update: %d %.80s; want 200 with quantity 42", status, body)
	}
	if _, _, body := get(t, list); !strings.Contains(body, `{"petId":1,"quantity":42,`) {
		t.Fatalf("a list after the no-cache one: %.80s; want the state it read", body)
	}
}

// When the store stops answering, a list past the bound is not answered
// from the held state: it waits for the store and gets 503 with
// Retry-After once the store timeout passes.
func TestMaxStalenessStoreStops(t *testing.T) {
	store := newStore(t)
	api := newAPI(t, store, inventory.WithMaxStaleness(time.Millisecond), inventory.WithStoreTimeout(50*time.Millisecond))
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	list := srv.URL + "/v1/inventory"
	if status, _, _ := get(t, list); status != 200 {
		t.Fatalf("first list: %d", status)
	}
	stopped := make(chan struct{})
	defer close(stopped)
	store.setHook(func(ctx context.Context, op string) error {
		if op != "list" {
			return nil
		}
		select {
		case <-stopped:
		case <-ctx.Done():
		}
		return inventory.Unavailable(errors.New("the store does not answer"))
	})
	time.Sleep(2 * time.Millisecond) // the held state is now older than the bound
	for range 3 {
		status, h, body := get(t, list)
		if status != 503 || h.Get("Retry-After") == "" {
			t.Fatalf("a list past the bound while the store does not answer: %d Retry-After %q %.80s; want 503 with Retry-After", status, h.Get("Retry-After"), body)
		}
	}
}
