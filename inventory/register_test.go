package inventory_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

func TestRegisterOnServeMux(t *testing.T) {
	store, err := memstore.New(inventory.Item{PetID: 4, Quantity: 1, Status: inventory.StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cases := []struct {
		method, path, body string
		status             int
		contains, allow    string
	}{
		{"GET", "/v1/inventory", "", 200, `[{"petId":4,"quantity":1,"status":"pending"}]`, ""},
		{"PATCH", "/v1/inventory/4", `{"quantity":9}`, 200, `{"petId":4,"quantity":9,"status":"pending"}`, ""},
		{"PATCH", "/v1/inventory/", `{"quantity":9}`, 400, `"invalid_pet_id"`, ""},
		{"PATCH", "/v1/inventory/5", `{"quantity":9}`, 404, `"not_found"`, ""},
		{"DELETE", "/v1/inventory/4", "", 405, `"method_not_allowed"`, "PATCH"},
		{"POST", "/v1/inventory", "", 405, `"method_not_allowed"`, "GET, HEAD"},
		{"GET", "/healthz", "", 200, "ok", ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.contains) || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s = %d %s (Allow %q); want %d with %s (Allow %q)", c.method, c.path, resp.StatusCode, b, resp.Header.Get("Allow"), c.status, c.contains, c.allow)
		}
	}
}

func TestRegisterRefusals(t *testing.T) {
	store, _ := memstore.New()
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Register(nil, "/v1"); err == nil {
		t.Error("Register(nil mux) returned no error")
	}
	for _, p := range []string{"v1", "/v1/", "/{x}"} {
		if err := api.Register(http.NewServeMux(), p); err == nil {
			t.Errorf("Register with prefix %q returned no error", p)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/inventory", func(http.ResponseWriter, *http.Request) {})
	if err := api.Register(mux, "/v1"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Register over a taken path: err = %v; want the mux's refusal as an error", err)
	}
}

// otherMethods are methods outside the standard set, which routers tend to
// answer themselves: the API must answer them 405 with Allow.
var otherMethods = []string{"FOO", "PROPFIND", "get", "patch"}

func TestMiddleware(t *testing.T) {
	store, err := memstore.New(inventory.Item{PetID: 4, Quantity: 1, Status: inventory.StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := api.Middleware("/v1")
	if err != nil {
		t.Fatal(err)
	}
	// The router behind: anything it is handed is answered 418, so that a
	// request the API should have served shows.
	router := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(mw(router))
	defer srv.Close()

	type tc struct {
		method, path, body string
		status             int
		contains, allow    string
	}
	cases := []tc{
		{"GET", "/v1/inventory", "", 200, `[{"petId":4,"quantity":1,"status":"pending"}]`, ""},
		{"PATCH", "/v1/inventory/4", `{"quantity":9}`, 200, `{"petId":4,"quantity":9,"status":"pending"}`, ""},
		{"PATCH", "/v1/inventory/", `{"quantity":9}`, 400, `"invalid_pet_id"`, ""},
		{"GET", "/v1/inventory/", "", 405, `"method_not_allowed"`, "PATCH"},
		{"PATCH", "/v1/inventory/4/x", `{"quantity":9}`, 404, `"not_found"`, ""},
		{"GET", "/v1/inventoryx", "", 418, "", ""},
		{"GET", "/v1/other", "", 418, "", ""},
		{"GET", "/inventory", "", 418, "", ""},
		{"GET", "/v2/inventory", "", 418, "", ""},
	}
	for _, m := range otherMethods {
		cases = append(cases, tc{m, "/v1/inventory", "", 405, `"method_not_allowed"`, "GET, HEAD"}, tc{m, "/v1/inventory/4", "", 405, `"method_not_allowed"`, "PATCH"})
	}
	for _, c := range cases {
		status, body, allow := do(t, srv, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(body, c.contains) || allow != c.allow {
			t.Errorf("%s %s = %d %s (Allow %q); want %d with %s (Allow %q)", c.method, c.path, status, body, allow, c.status, c.contains, c.allow)
		}
	}

	for _, p := range []string{"v1", "/v1/", "/{x}", "/v 1"} {
		if _, err := api.Middleware(p); err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Errorf("Middleware(%q): err = %v; want an error naming the prefix", p, err)
		}
	}
	if _, err := api.Middleware(""); err != nil {
		t.Errorf(`Middleware(""): %v`, err)
	}
}

// TestOtherMethodsNetHTTP checks that the net/http mounts answer methods
// outside the standard set with the contract's 405.
func TestOtherMethodsNetHTTP(t *testing.T) {
	store, _ := memstore.New(inventory.Item{PetID: 4, Quantity: 1, Status: inventory.StatusPending})
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	registered := http.NewServeMux()
	if err := api.Register(registered, "/v1"); err != nil {
		t.Fatal(err)
	}
	stripped := http.NewServeMux()
	stripped.Handle("/v1/", http.StripPrefix("/v1", api))
	for name, h := range map[string]http.Handler{"Register": registered, "StripPrefix": stripped} {
		srv := httptest.NewServer(h)
		for _, m := range otherMethods {
			for path, allow := range map[string]string{"/v1/inventory": "GET, HEAD", "/v1/inventory/4": "PATCH", "/v1/inventory/": "PATCH"} {
				status, body, gotAllow := do(t, srv, m, path, "")
				if status != 405 || !strings.Contains(body, `"method_not_allowed"`) || gotAllow != allow {
					t.Errorf("%s: %s %s = %d %s (Allow %q); want 405 method_not_allowed (Allow %q)", name, m, path, status, body, gotAllow, allow)
				}
			}
		}
		srv.Close()
	}
}

func do(t *testing.T, srv *httptest.Server, method, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Allow")
}
