package inventoryfiber_test

import (
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// Methods outside fiber's default set get the contract's 405 with Allow
// once the app lists them in RequestMethods, as the README says a host
// must; without that, fiber answers them itself before any handler runs,
// which is what the contract documents. Over real sockets.
func TestOtherMethods(t *testing.T) {
	extra := []string{"PROPFIND", "FOO"}
	for _, listed := range []bool{true, false} {
		cfg := fiber.Config{DisableStartupMessage: true}
		if listed {
			cfg.RequestMethods = append(slices.Clone(fiber.DefaultMethods), extra...)
		}
		app := fiber.New(cfg)
		if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = app.Listener(ln) }()
		for _, m := range append(extra, "get") {
			for path, allow := range map[string]string{"/v1/inventory": "GET", "/v1/inventory/1": "PATCH", "/v1/inventory/": "PATCH"} {
				req, _ := http.NewRequest(m, "http://"+ln.Addr().String()+path, nil)
				req.Header.Set("Authorization", "Bearer k")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				api := resp.StatusCode == 405 && strings.Contains(string(b), `"method_not_allowed"`) && resp.Header.Get("Allow") == allow
				// A lowercase method is not in RequestMethods (fiber
				// uppercases the methods of routes): fiber's own 400, as
				// documented.
				if want := listed && m != "get"; api != want {
					t.Errorf("RequestMethods listed %v: %s %s = %d %s (Allow %q); want the API's 405: %v", listed, m, path, resp.StatusCode, b, resp.Header.Get("Allow"), want)
				}
				if !api && resp.StatusCode != http.StatusBadRequest {
					t.Errorf("RequestMethods listed %v: %s %s = %d %s; fiber's own answer was 400 (update the docs if fiber changed)", listed, m, path, resp.StatusCode, b)
				}
			}
		}
		_ = app.Shutdown()
	}
}
