package e2e

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// outageStore is a memory store whose list reads fail as unavailable while
// down is set.
type outageStore struct {
	*memstore.Store
	down atomic.Bool
}

func (s *outageStore) List(ctx context.Context) ([]inventory.Item, error) {
	if s.down.Load() {
		return nil, inventory.Unavailable(errors.New("connection refused"))
	}
	return s.Store.List(ctx)
}

func (s *outageStore) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if s.down.Load() {
		return inventory.Changes{}, inventory.Unavailable(errors.New("connection refused"))
	}
	return s.Store.ListChanges(ctx, since)
}

// The answers of a deployment with a stale-if-error bound match the
// document: the list's Cache-Control with its directive, and a list
// answered stale (200 and 304) with Age and Cache-Status; an Age that is
// not a whole number does not, so the headers are validated.
func TestOpenAPIStaleList(t *testing.T) {
	doc := loadDoc(t)
	mem, err := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	if err != nil {
		t.Fatal(err)
	}
	store := &outageStore{Store: mem}
	api, err := inventory.New(store, inventory.WithAPIKeys("openapi-stale-key"), inventory.WithStoreTimeout(time.Second),
		inventory.WithStaleIfError(30*time.Second), inventory.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	list := func(ifNoneMatch string) (*http.Request, int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/inventory", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer openapi-stale-key")
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return req, resp.StatusCode, resp.Header, body
	}
	req, status, h, body := list("")
	if err := validate(doc, req, "/inventory", status, h, body); err != nil || status != 200 {
		t.Fatalf("a fresh list (%d, Cache-Control %q): %v", status, h.Get("Cache-Control"), err)
	}
	store.down.Store(true)
	req, status, h, body = list("")
	if status != 200 || h.Get("Cache-Status") == "" || h.Get("Age") == "" {
		t.Fatalf("a list through the outage: %d %v; want it answered stale", status, h)
	}
	if err := validate(doc, req, "/inventory", status, h, body); err != nil {
		t.Errorf("a stale list (%v): %v", h, err)
	}
	h.Set("Age", "1.5")
	if err := validate(doc, req, "/inventory", status, h, body); err == nil {
		t.Errorf("a stale list with Age: 1.5 passes the document's validation; want Age a whole number")
	}
	// kin-openapi validates no 304: check its headers against the
	// document's NotModified response by hand.
	_, status, h, _ = list(h.Get("Etag"))
	if status != 304 || h.Get("Cache-Status") == "" {
		t.Fatalf("a conditional list through the outage: %d %v; want 304 answered stale", status, h)
	}
	age, err := strconv.Atoi(h.Get("Age"))
	if err != nil {
		t.Fatalf("a stale 304's Age %q: %v", h.Get("Age"), err)
	}
	nm := doc.Components.Responses["NotModified"].Value.Headers
	for name, value := range map[string]any{"Cache-Control": h.Get("Cache-Control"), "Age": float64(age), "Cache-Status": h.Get("Cache-Status")} {
		hd := nm[name]
		if hd == nil {
			t.Errorf("the document's NotModified response has no %s header", name)
			continue
		}
		if err := hd.Value.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("a stale 304's %s %v does not match the document: %v", name, value, err)
		}
	}
}
