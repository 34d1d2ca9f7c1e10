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
		{"POST", "/v1/inventory", "", 405, `"method_not_allowed"`, "GET"},
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
