package inventoryfiber_test

import (
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// TestErrorHandlerHidesTheHead: fasthttp's error for a head it cannot
// parse quotes the head; Fiber's default ErrorHandler answers that text,
// the key included; ErrorHandler answers the status text alone.
func TestErrorHandlerHidesTheHead(t *testing.T) {
	const key = "errorhandler-test-key-93b1"
	heads := map[string]string{
		"control byte in a value":       "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX-Probe: a\x01b\r\n\r\n",
		"NUL in a value":                "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX-Probe: a\x00b\r\n\r\n",
		"control byte in Authorization": "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\x01\r\n\r\n",
		"invalid header name":           "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX Pro(be): x\r\n\r\n",
		"bad request line":              "GET /v1/inventory HTTP/1.1 extra\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n\r\n",
	}
	serve := func(app *fiber.App) string {
		store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable})
		if err != nil {
			t.Fatal(err)
		}
		api, err := inventory.New(store, inventory.WithAPIKeys(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = app.Listener(ln) }()
		t.Cleanup(func() { _ = app.Shutdown() })
		return ln.Addr().String()
	}
	echoed := 0
	plain := serve(fiber.New(fiber.Config{DisableStartupMessage: true}))
	for _, head := range heads {
		if strings.Contains(benchfix.RawAnswer(t, plain, head), key) {
			echoed++
		}
	}
	if echoed == 0 {
		t.Fatal("Fiber's default ErrorHandler repeats none of these heads: the test no longer shows what ErrorHandler is for")
	}
	for name, app := range map[string]*fiber.App{
		"ErrorHandler": fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: inventoryfiber.ErrorHandler}),
		"NewApp":       inventoryfiber.NewApp(fiber.Config{DisableStartupMessage: true}),
	} {
		safe := serve(app)
		for what, head := range heads {
			got := benchfix.RawAnswer(t, safe, head)
			if strings.Contains(got, key) {
				t.Errorf("%s, %s: the answer repeats the key: %q", name, what, got)
			}
			if !strings.HasPrefix(got, "HTTP/1.1 400 ") || !strings.HasSuffix(got, "\r\n\r\nBad Request") {
				t.Errorf("%s, %s: %q, want a plain 400 Bad Request", name, what, got)
			}
		}
	}
}

// TestNewAppSettings: NewApp sets what the adapter needs over what the
// host's config says, keeps the rest of it, and keeps an ErrorHandler of
// the host's own.
func TestNewAppSettings(t *testing.T) {
	app := inventoryfiber.NewApp(fiber.Config{BodyLimit: 123, StreamRequestBody: false, DisablePreParseMultipartForm: false})
	cfg := app.Config()
	if !cfg.StreamRequestBody || !cfg.DisablePreParseMultipartForm || cfg.BodyLimit != 123 {
		t.Errorf("NewApp's config: StreamRequestBody %v, DisablePreParseMultipartForm %v, BodyLimit %d; want true, true, the host's 123",
			cfg.StreamRequestBody, cfg.DisablePreParseMultipartForm, cfg.BodyLimit)
	}
	if !app.Server().SecureErrorLogMessage {
		t.Error("NewApp's fasthttp server has SecureErrorLogMessage off")
	}
	if cfg.ErrorHandler == nil || reflect.ValueOf(cfg.ErrorHandler).Pointer() != reflect.ValueOf(inventoryfiber.ErrorHandler).Pointer() {
		t.Error("NewApp without an ErrorHandler does not use inventoryfiber.ErrorHandler")
	}
	own := func(c *fiber.Ctx, err error) error { return c.SendStatus(fiber.StatusTeapot) }
	cfg = inventoryfiber.NewApp(fiber.Config{ErrorHandler: own}).Config()
	if reflect.ValueOf(cfg.ErrorHandler).Pointer() != reflect.ValueOf(own).Pointer() {
		t.Error("NewApp replaced the host's own ErrorHandler")
	}
}
