package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

// testKey is the API key every server of these tests accepts. It is long
// enough for the suite to look for echoes of it.
const testKey = "e2e-key-3b1f0c9d7a2e4f68"

// seed is what every store starts with: pets of all three statuses, a
// negative id, ids that sort differently as strings and as numbers.
var seed = []inventory.Item{
	{PetID: -7, Quantity: 5, Status: inventory.StatusSold},
	{PetID: 1, Quantity: 10, Status: inventory.StatusAvailable},
	{PetID: 2, Quantity: 0, Status: inventory.StatusPending},
	{PetID: 10, Quantity: 7, Status: inventory.StatusSold},
	{PetID: 42, Quantity: 100, Status: inventory.StatusAvailable},
	{PetID: 1000, Quantity: 3, Status: inventory.StatusPending},
}

// transport mounts an API under /v1 on a real listener and returns the
// base URL (with /v1).
type transport struct {
	name  string
	serve func(t testing.TB, h http.Handler, api *inventory.API) string
}

// transports are the three ways the library is served. serve takes the
// API and, for net/http, an optional handler wrapping it (the self-test's
// broken servers).
var transports = []transport{
	{"nethttp", serveNetHTTP},
	{"gin", serveGin},
	{"fiber", serveFiber},
	{"fiber-stream", serveFiberStreaming},
}

// storeKind opens a fresh store holding items; it skips the test when
// the store is not available here.
type storeKind struct {
	name string
	open func(t testing.TB, items ...inventory.Item) inventory.Store
}

// stores lists every backend the suite runs against; one line adds one.
var stores = []storeKind{
	{"memory", openMemory},
	{"miniredis", openMiniredis},
	{"redis", openRedis}, // a real redis-server, when REDIS_URL is set
}

// testBodyTimeout is the body timeout of the APIs newAPI makes: short, yet
// long enough that the suite's largest bodies (size/*) arrive within it
// under -race on two busy cores.
const testBodyTimeout = 2 * time.Second

func openMemory(t testing.TB, items ...inventory.Item) inventory.Store {
	s, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newAPI returns an API over store that accepts testKey and logs nowhere.
// Its body timeout is testBodyTimeout: the suite's body/stalled check
// waits that long for the 408 in every run of the suite here, so the
// default 5 s would cost a minute of the package for nothing the check
// does not prove at 2 s (opts may set another).
func newAPI(t testing.TB, store inventory.Store, opts ...inventory.Option) *inventory.API {
	t.Helper()
	opts = append([]inventory.Option{inventory.WithAPIKeys(testKey), inventory.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		inventory.WithBodyTimeout(testBodyTimeout)}, opts...)
	api, err := inventory.New(store, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// serveNetHTTP serves h (the API itself when h is nil) under /v1.
func serveNetHTTP(t testing.TB, h http.Handler, api *inventory.API) string {
	if h == nil {
		h = api
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", h))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func serveGin(t testing.TB, _ http.Handler, api *inventory.API) string {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	noRoute, err := inventorygin.NoRoute(api, "/v1") // methods gin routes nowhere
	if err != nil {
		t.Fatal(err)
	}
	engine.NoRoute(noRoute)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// serveFiber serves the API on a Fiber app with fiber's defaults but one:
// DisablePreParseMultipartForm. By default fasthttp parses a
// multipart/form-data body before any handler runs and answers a
// malformed one with its own 400 text/plain, so the API cannot answer 415
// as the contract requires; a Fiber host must set it, as it sets
// BodyLimit.
func serveFiber(t testing.TB, _ http.Handler, api *inventory.API) string {
	return serveFiberWith(t, api, fiber.Config{DisableStartupMessage: true, DisablePreParseMultipartForm: true})
}

// serveFiberStreaming serves the API as the examples configure Fiber: the
// request body streamed (StreamRequestBody), so that the adapter hands the
// API a reader and a huge body is refused without being buffered.
func serveFiberStreaming(t testing.TB, _ http.Handler, api *inventory.API) string {
	return serveFiberWith(t, api, fiber.Config{
		DisableStartupMessage: true, DisablePreParseMultipartForm: true,
		StreamRequestBody: true, BodyLimit: 1 << 20,
	})
}

// serveFiberWith serves the API on a Fiber app made with cfg and, as
// docs/EMBEDDING.md's recipe sets them, inventoryfiber.ErrorHandler (when
// cfg names no other) and fasthttp's SecureErrorLogMessage: without them
// Fiber answers a request head it cannot parse with fasthttp's error,
// which quotes the head and its key (security/malformed-head-no-echo).
func serveFiberWith(t testing.TB, api *inventory.API, cfg fiber.Config) string {
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = inventoryfiber.ErrorHandler
	}
	app := fiber.New(cfg)
	app.Server().SecureErrorLogMessage = true
	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil { // methods fiber routes nowhere
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()
	t.Cleanup(func() {
		// fasthttp's graceful shutdown waits for every open connection,
		// so a client's pooled connection would hold it for the pool's
		// idle timeout; the suite closes its idle ones, the bound keeps a
		// regression from hanging the tests.
		if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
			t.Errorf("fiber shutdown: %v", err)
		}
		<-done
	})
	return "http://" + ln.Addr().String() + "/v1"
}

// listStore returns what the store holds.
func listStore(t testing.TB, s inventory.Store) []inventory.Item {
	t.Helper()
	items, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return items
}
