package inventoryfiber_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// Methods fiber routes nowhere (outside RequestMethods, or lowercase) get
// the contract's 405 with Allow once ServeOtherMethods is set, whether or
// not the app lists some of them; without it, fiber answers them itself
// with its 400 before any handler runs, as the docs say. Paths that are
// not the API's keep fiber's answer. Over real sockets.
func TestOtherMethods(t *testing.T) {
	methods := []string{"FOO", "PROPFIND", "get", "patch"}
	for _, tc := range []struct {
		name   string
		listed []string // added to RequestMethods
		serve  bool     // ServeOtherMethods
	}{
		{"fiber's own", nil, false},
		{"ServeOtherMethods", nil, true},
		{"ServeOtherMethods, PROPFIND listed", []string{"PROPFIND"}, true},
	} {
		cfg := fiber.Config{DisableStartupMessage: true}
		if tc.listed != nil {
			cfg.RequestMethods = slices.Concat(fiber.DefaultMethods, tc.listed)
		}
		app := fiber.New(cfg)
		api := newAPI(t)
		if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		if tc.serve {
			if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil {
				t.Fatal(err)
			}
		}
		addr := serveApp(t, app)
		do := func(method, path string) (int, string, string) {
			req, _ := http.NewRequest(method, "http://"+addr+path, nil)
			req.Header.Set("Authorization", "Bearer k")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(b), resp.Header.Get("Allow")
		}
		for _, m := range methods {
			for path, allow := range map[string]string{"/v1/inventory": "GET, HEAD", "/v1/inventory/1": "PATCH", "/v1/inventory/": "PATCH", "/V1/Inventory/1": "PATCH"} {
				status, body, gotAllow := do(m, path)
				api := status == 405 && strings.Contains(body, `"method_not_allowed"`) && gotAllow == allow
				want := tc.serve || slices.Contains(tc.listed, m)
				if api != want {
					t.Errorf("%s: %s %s = %d %s (Allow %q); want the API's 405: %v", tc.name, m, path, status, body, gotAllow, want)
				}
				if !api && status != http.StatusBadRequest {
					t.Errorf("%s: %s %s = %d %s; fiber's own answer was 400 (update the docs if fiber changed)", tc.name, m, path, status, body)
				}
			}
			// Not the API's paths: fiber's answer, whatever the method.
			for _, path := range []string{"/v1/other", "/v1/inventory/1/x", "/v1/inventoryx", "/v1//inventory"} { // the last: fiber routes the path as sent
				if status, body, _ := do(m, path); status == 405 || strings.Contains(body, "method_not_allowed") {
					t.Errorf("%s: %s %s = %d %s; the API answered a path not its own", tc.name, m, path, status, body)
				}
			}
		}
	}
}

func TestServeOtherMethodsRefusals(t *testing.T) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if err := inventoryfiber.ServeOtherMethods(nil, newAPI(t), "/v1"); err == nil {
		t.Error("ServeOtherMethods(nil app): no error")
	}
	if err := inventoryfiber.ServeOtherMethods(app, nil, "/v1"); err == nil {
		t.Error("ServeOtherMethods(nil api): no error")
	}
	if err := inventoryfiber.ServeOtherMethods(app, newAPI(t), "v1/"); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("ServeOtherMethods with prefix v1/: err = %v; want one naming the prefix", err)
	}
}
