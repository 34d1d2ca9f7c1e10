package inventoryfiber_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

func newAPI(t *testing.T, opts ...inventory.Option) *inventory.API {
	t.Helper()
	store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusSold})
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, append([]inventory.Option{inventory.WithAPIKeys("k")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

func TestRegisterRejectsNil(t *testing.T) {
	if err := inventoryfiber.Register(nil, newAPI(t)); err == nil {
		t.Error("Register(nil router) returned no error")
	}
	if err := inventoryfiber.Register(fiber.New(), nil); err == nil {
		t.Error("Register(nil api) returned no error")
	}
}

// "/inventory/" is the item route with an empty petId under both of
// fiber's routing modes, as it is on every other transport.
func TestTrailingSlashIsEmptyPetID(t *testing.T) {
	for _, strict := range []bool{false, true} {
		app := fiber.New(fiber.Config{StrictRouting: strict, DisableStartupMessage: true})
		if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPatch, "/v1/inventory/", strings.NewReader(`{"quantity":1}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"invalid_pet_id"`) {
			t.Errorf("StrictRouting=%v: PATCH /v1/inventory/ = %d %s, want 400 invalid_pet_id", strict, resp.StatusCode, body)
		}
	}
}

// The Authenticator may keep the key past the request (a cache, say):
// the adapter must hand it a copy, not fasthttp's reused buffer.
func TestAuthenticatorKeyOutlivesRequest(t *testing.T) {
	var kept []string
	store, _ := memstore.New()
	api, err := inventory.New(store, inventory.WithAuthenticator(inventory.AuthenticatorFunc(
		func(_ context.Context, key string) error {
			kept = append(kept, key)
			return nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if err := inventoryfiber.Register(app, api); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"first-key", "other-key"} {
		req := httptest.NewRequest(http.MethodGet, "/inventory", nil)
		req.Header.Set("Authorization", "Bearer "+k)
		if _, err := app.Test(req); err != nil {
			t.Fatal(err)
		}
	}
	if len(kept) != 2 || kept[0] != "first-key" || kept[1] != "other-key" {
		t.Fatalf("keys kept by the Authenticator = %q, want [first-key other-key]", kept)
	}
}

// A host's middleware sees the API's headers after c.Next() under the
// names it asks for, and replacing one replaces it: the client gets one
// WWW-Authenticate, the middleware's.
func TestHostMiddlewareReadsAndSetsAPIHeaders(t *testing.T) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	var seen, seenRetry string
	app.Use(func(c *fiber.Ctx) error {
		err := c.Next()
		seen = c.GetRespHeader("WWW-Authenticate")
		seenRetry = c.GetRespHeader(fiber.HeaderCacheControl)
		if c.Query("override") != "" {
			c.Set("WWW-Authenticate", `Bearer realm="host"`)
		}
		return err
	})
	if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
		t.Fatal(err)
	}
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/v1/inventory", nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := `Bearer realm="inventory"`; seen != want || seenRetry != "no-store" {
		t.Errorf("middleware read WWW-Authenticate %q and Cache-Control %q after c.Next(); want %q and no-store", seen, seenRetry, want)
	}
	if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != `Bearer realm="inventory"` {
		t.Errorf("client got WWW-Authenticate %q; want the API's one", got)
	}

	resp, err = app.Test(httptest.NewRequest(http.MethodGet, "/v1/inventory?override=1", nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != `Bearer realm="host"` {
		t.Errorf("after the middleware set WWW-Authenticate the client got %q; want only the middleware's value", got)
	}
}

// methodKeeper is an Observer that keeps the method strings it is given,
// as a metrics library keeps label values.
type methodKeeper struct{ methods []string }

func (m *methodKeeper) ObserveRequest(_ context.Context, o inventory.RequestObservation) {
	m.methods = append(m.methods, o.Method)
}
func (m *methodKeeper) ObserveStore(context.Context, inventory.StoreObservation) {}

// The method an observer is given stays what it was after fasthttp reuses
// the request's memory for the next request on the connection.
func TestObserverMayKeepTheMethod(t *testing.T) {
	keeper := &methodKeeper{}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if err := inventoryfiber.Register(app, newAPI(t, inventory.WithObserver(keeper))); err != nil {
		t.Fatal(err)
	}
	addr := serveApp(t, app)
	// One keep-alive connection, so that fasthttp reuses one buffer.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	sent := []string{"PATCH", "GET", "OPTIONS", "DELETE", "GET"}
	for _, m := range sent {
		req, _ := http.NewRequest(m, "http://"+addr+"/inventory", nil)
		req.Header.Set("Authorization", "Bearer k")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if fmt.Sprint(keeper.methods) != fmt.Sprint(sent) {
		t.Errorf("methods kept by the observer: %q; sent %q", keeper.methods, sent)
	}
}

// A large list comes from the API in pieces shared by every list in
// flight; the adapter streams them. Over a real socket, the body is the
// whole inventory, in order, with its Content-Length, first, from the
// cache, and after an update.
func TestLargeListOverSocket(t *testing.T) {
	api, check := benchfix.LargeList(t)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if err := inventoryfiber.Register(app, api); err != nil {
		t.Fatal(err)
	}
	addr := serveApp(t, app)
	check("http://" + addr + "/inventory")
	benchfix.Head(t, "http://"+addr+"/inventory", "http://"+addr+"/inventory/1")
}

// serveApp serves app on a loopback port of its own until the test ends,
// and returns the port's address.
func serveApp(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String()
}

// An update body that stalls is answered 408 request_timeout with the
// contract's Error body once the API's body timeout passes, not fasthttp's
// plain-text 408, also when the server's own ReadTimeout is longer; with
// the body streamed or buffered by fasthttp before the handler.
func TestStalledBodyOverSocket(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("StreamRequestBody=%v", stream), func(t *testing.T) {
			app := fiber.New(fiber.Config{StreamRequestBody: stream, ReadTimeout: time.Minute, DisableStartupMessage: true})
			api := benchfix.StallAPI(t)
			if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
				t.Fatal(err)
			}
			if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil {
				t.Fatal(err)
			}
			addr := serveApp(t, app)
			benchfix.StalledBody(t, "http://"+addr+"/v1/inventory/1", benchfix.StallTimeout)
		})
	}
}

// The adapter passes Cache-Control: under WithMaxStaleness a list is
// answered from the state held before an update, and a no-cache list (the
// header on two lines, as the adapter joins them) shows the update.
func TestNoCacheReachesTheAPI(t *testing.T) {
	api := newAPI(t, inventory.WithMaxStaleness(time.Hour))
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	list := func(cacheControl ...string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
		req.Header.Set("Authorization", "Bearer k")
		for _, v := range cacheControl {
			req.Header.Add("Cache-Control", v)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	list()
	if _, err := api.Service().SetQuantity(context.Background(), 1, 42); err != nil {
		t.Fatal(err)
	}
	if got := list("max-age=5"); !strings.Contains(got, `"quantity":3,`) {
		t.Fatalf("a list within the bound after an update: %s; want the held state (quantity 3)", got)
	}
	if got := list("max-age=5", "no-cache"); !strings.Contains(got, `"quantity":42,`) {
		t.Fatalf("a no-cache list after an update: %s; want quantity 42", got)
	}
}
