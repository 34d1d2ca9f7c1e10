package inventorygin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

// Methods outside the standard set reach the engine's NoRoute, where the
// API answers them 405 with Allow under its prefix; other paths keep the
// host's NoRoute (here a plain 404 "host"), over a real socket.
func TestNoRouteAnswersOtherMethods(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	for _, methodNotAllowed := range []bool{false, true} {
		api := newAPI(t)
		engine := gin.New()
		engine.HandleMethodNotAllowed = methodNotAllowed
		engine.GET("/other", func(c *gin.Context) { c.String(200, "other") })
		if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		noRoute, err := inventorygin.NoRoute(api, "/v1")
		if err != nil {
			t.Fatal(err)
		}
		host := func(c *gin.Context) { c.String(404, "host") }
		engine.NoRoute(noRoute, host)
		engine.NoMethod(noRoute, host)
		srv := httptest.NewServer(engine)

		type tc struct {
			method, path string
			status       int
			contains     string
			allow        string
		}
		var cases []tc
		for _, m := range []string{"FOO", "PROPFIND", "get", "patch"} {
			cases = append(cases,
				tc{m, "/v1/inventory", 405, `"method_not_allowed"`, "GET, HEAD"},
				tc{m, "/v1/inventory/", 405, `"method_not_allowed"`, "PATCH"},
				tc{m, "/v1/inventory/1", 405, `"method_not_allowed"`, "PATCH"},
				tc{m, "/other", 404, "host", ""},
			)
		}
		cases = append(cases,
			tc{"GET", "/nowhere", 404, "host", ""},
			tc{"GET", "/v1/inventory/1/x", 404, `"not_found"`, ""},
			tc{"DELETE", "/v1/inventory", 405, `"method_not_allowed"`, "GET, HEAD"},
		)
		for _, c := range cases {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
			req.Header.Set("Authorization", "Bearer k")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.contains) || (c.allow != "" && resp.Header.Get("Allow") != c.allow) {
				t.Errorf("HandleMethodNotAllowed=%v: %s %s = %d %s (Allow %q); want %d with %s (Allow %q)", methodNotAllowed, c.method, c.path, resp.StatusCode, b, resp.Header.Get("Allow"), c.status, c.contains, c.allow)
			}
		}
		srv.Close()
	}
}

func TestNoRouteRefusals(t *testing.T) {
	if _, err := inventorygin.NoRoute(nil, "/v1"); err == nil {
		t.Error("NoRoute(nil api) returned no error")
	}
	if _, err := inventorygin.NoRoute(newAPI(t), "v1/"); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("NoRoute with prefix v1/: err = %v; want one naming the prefix", err)
	}
}
