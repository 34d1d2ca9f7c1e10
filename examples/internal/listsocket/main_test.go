package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// TestRunRefusesUnknownSides: a wrong -framework or -side fails before
// anything listens, naming both.
func TestRunRefusesUnknownSides(t *testing.T) {
	t.Setenv("INVENTORY_API_KEYS", "k")
	for _, tc := range [][2]string{{"echo", "lib"}, {"gin", "both"}} {
		err := run(tc[0], tc[1], "256.0.0.1:0", 3)
		if err == nil || !strings.Contains(err.Error(), `-framework "`+tc[0]+`" -side "`+tc[1]+`"`) {
			t.Errorf("run(%q, %q) = %v, want the error naming both", tc[0], tc[1], err)
		}
	}
}

// TestSidesAnswerAlike: on every framework, the lib side (the API) and the
// bare side answer the list with the same bytes, the same headers but the
// tag's value, and 401 without the key.
func TestSidesAnswerAlike(t *testing.T) {
	items := benchfix.Items(5)
	store, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	bare, err := newBareList(items, "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, fw := range []string{"gin", "nethttp", "fiber"} {
		var lib, plain *http.Response
		for side, a := range map[string]*inventory.API{"lib": api, "bare": nil} {
			for _, key := range []string{"", "k"} {
				resp := get(t, fw, a, bare, key)
				if key == "" {
					if resp.StatusCode != http.StatusUnauthorized {
						t.Errorf("%s/%s without a key: %d, want 401", fw, side, resp.StatusCode)
					}
					continue
				}
				if side == "lib" {
					lib = resp
				} else {
					plain = resp
				}
			}
		}
		libBody, _ := io.ReadAll(lib.Body)
		bareBody, _ := io.ReadAll(plain.Body)
		if lib.StatusCode != http.StatusOK || plain.StatusCode != http.StatusOK || string(libBody) != string(bareBody) {
			t.Errorf("%s: lib %d %s, bare %d %s; want 200 and the same bytes", fw, lib.StatusCode, libBody, plain.StatusCode, bareBody)
		}
		for _, h := range []string{"Cache-Control", "Vary", "X-Content-Type-Options", "Content-Type", "Content-Length"} {
			if lib.Header.Get(h) != plain.Header.Get(h) {
				t.Errorf("%s: %s is %q from the API, %q from the bare side", fw, h, lib.Header.Get(h), plain.Header.Get(h))
			}
		}
		if len(lib.Header.Get("Etag")) != len(plain.Header.Get("Etag")) {
			t.Errorf("%s: ETag %q from the API, %q from the bare side: want the same length", fw, lib.Header.Get("Etag"), plain.Header.Get("Etag"))
		}
	}
}

// get sends GET /v1/inventory, with key as the bearer unless "", to the
// server of framework fw serving api (nil: bare).
func get(t *testing.T, fw string, api *inventory.API, bare *bareList, key string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	var h http.Handler
	switch fw {
	case "gin":
		engine, err := ginEngine(api, bare)
		if err != nil {
			t.Fatal(err)
		}
		h = engine
	case "nethttp":
		mux, err := netHTTPMux(api, bare)
		if err != nil {
			t.Fatal(err)
		}
		h = mux
	default:
		app, err := fiberApp(api, bare)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}
