package adapter_test

import (
	"context"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

func newAPI(t *testing.T) *inventory.API {
	t.Helper()
	store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 2, Status: inventory.StatusSold})
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"), inventory.WithStoreTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// Every header name comes in canonical form, each once, whatever the
// answer: what lets net/http and fasthttp hosts find and replace them.
func TestHeaderNamesAreCanonical(t *testing.T) {
	api := newAPI(t)
	for _, req := range []adapter.Request{
		{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Bearer k"},
		{Method: http.MethodGet, Route: inventory.RouteList},                                           // 401 with WWW-Authenticate
		{Method: http.MethodDelete, Route: inventory.RouteItem, PetID: "1", Authorization: "Bearer k"}, // 405 with Allow
	} {
		resp := adapter.Serve(context.Background(), api, req)
		seen := map[string]bool{}
		resp.VisitHeaders(func(name, value string) {
			if name != textproto.CanonicalMIMEHeaderKey(name) || seen[name] || value == "" {
				t.Errorf("%s %v: header %q: %q (seen before: %v); want canonical names, each once, with a value", req.Method, req.Route, name, value, seen[name])
			}
			seen[name] = true
		})
		resp.Release()
	}
}

// The two kinds of Body and the zero Body reach the parser alike, and a
// body over the limit is refused without being read whole.
func TestBodies(t *testing.T) {
	api := newAPI(t)
	for name, c := range map[string]struct {
		body   adapter.Body
		length int64
		want   string
	}{
		"bytes":          {adapter.BufferedBody([]byte(`{"quantity":5}`)), 0, `"quantity":5`},
		"reader":         {adapter.StreamedBody(strings.NewReader(`{"quantity":6}`)), -1, `"quantity":6`},
		"zero body":      {adapter.Body{}, 0, `"code":"invalid_json"`},
		"nil reader":     {adapter.StreamedBody(nil), 0, `"code":"invalid_json"`},
		"empty bytes":    {adapter.BufferedBody(nil), 0, `"code":"invalid_json"`},
		"declared large": {adapter.StreamedBody(strings.NewReader(`{}`)), 1 << 30, `"code":"payload_too_large"`},
		"bytes too long": {adapter.BufferedBody([]byte(`{"quantity":1}` + strings.Repeat(" ", 17<<10))), 0, `"code":"payload_too_large"`},
	} {
		resp := adapter.Serve(context.Background(), api, adapter.Request{
			Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", Authorization: "Bearer k",
			ContentLength: c.length, Body: c.body,
		})
		body := resp.Body()
		if len(body) != 1 || !strings.Contains(string(body[0]), c.want) || resp.BodyLen() != len(body[0]) {
			t.Errorf("%s: %d %q (length %d); want one piece with %s", name, resp.Status, body, resp.BodyLen(), c.want)
		}
		resp.Release()
		resp.Release() // a second Release does nothing
	}
}

// A cached list body is stable (an adapter may hand it over without a
// copy); an error body is pooled and not.
func TestStable(t *testing.T) {
	api := newAPI(t)
	list := adapter.Serve(context.Background(), api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Bearer k"})
	denied := adapter.Serve(context.Background(), api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList})
	if !list.Stable() || denied.Stable() {
		t.Errorf("Stable: list %v, 401 %v; want true, false", list.Stable(), denied.Stable())
	}
	list.Release()
	denied.Release()
}

// Match finds the routes the three Paths register, as a router would:
// the list, the item (an empty petId included), nothing else; under says
// which paths are the API's to answer 404.
func TestMatchAndPaths(t *testing.T) {
	for _, c := range []struct {
		path          string
		caseSensitive bool
		route         inventory.Route
		petID         string
		under         bool
	}{
		{"/v1/inventory", true, inventory.RouteList, "", true},
		{"/v1/inventory/", true, inventory.RouteItem, "", true},
		{"/v1/inventory/42", true, inventory.RouteItem, "42", true},
		{"/v1/inventory/42/x", true, 0, "", true},
		{"/v1/inventoryx", true, 0, "", false},
		{"/v2/inventory", true, 0, "", false},
		{"/V1/Inventory/7", true, 0, "", false},
		{"/V1/Inventory/7", false, inventory.RouteItem, "7", true},
	} {
		route, petID, under := adapter.Match(c.path, "/v1", c.caseSensitive)
		if route != c.route || petID != c.petID || under != c.under {
			t.Errorf("Match(%q, caseSensitive %v) = %v %q %v; want %v %q %v", c.path, c.caseSensitive, route, petID, under, c.route, c.petID, c.under)
		}
	}
	paths := adapter.Paths(":petId")
	if paths[0].Pattern != "/inventory" || paths[1].Pattern != "/inventory/" || paths[2].Pattern != "/inventory/:petId" || !paths[2].PetID || paths[0].Route != inventory.RouteList {
		t.Errorf("Paths(:petId) = %+v", paths)
	}
	for _, bad := range []string{"v1", "/v1/", "/{v}", "/a b"} {
		if adapter.CheckPrefix(bad) == nil {
			t.Errorf("CheckPrefix(%q) accepted it", bad)
		}
	}
}

// Resolve gives each path's own route, except "/inventory/" landing on the
// list's pattern (a router that ignores a trailing slash): the item route
// with an empty petId.
func TestResolve(t *testing.T) {
	paths := adapter.Paths(":petId")
	for _, c := range []struct {
		path     adapter.Path
		reqPath  string
		param    string
		route    inventory.Route
		petID    string
		describe string
	}{
		{paths[0], "/v1/inventory", "", inventory.RouteList, "", "the list"},
		{paths[0], "/v1/inventory/", "", inventory.RouteItem, "", "the list's pattern matched with a trailing slash"},
		{paths[1], "/v1/inventory/", "", inventory.RouteItem, "", "the item with an empty petId"},
		{paths[2], "/v1/inventory/42", "42", inventory.RouteItem, "42", "the item"},
	} {
		route, petID := c.path.Resolve(c.reqPath, c.param)
		if route != c.route || petID != c.petID {
			t.Errorf("%s: %+v.Resolve(%q, %q) = %v %q; want %v %q", c.describe, c.path, c.reqPath, c.param, route, petID, c.route, c.petID)
		}
	}
}
