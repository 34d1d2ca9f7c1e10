package inventoryfiber_test

import (
	"net"
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
	serve := func(cfg fiber.Config) string {
		store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable})
		if err != nil {
			t.Fatal(err)
		}
		api, err := inventory.New(store, inventory.WithAPIKeys(key))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DisableStartupMessage = true
		app := fiber.New(cfg)
		if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		app.Server().SecureErrorLogMessage = true
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = app.Listener(ln) }()
		t.Cleanup(func() { _ = app.Shutdown() })
		return ln.Addr().String()
	}
	echoed := 0
	plain := serve(fiber.Config{})
	for _, head := range heads {
		if strings.Contains(benchfix.RawAnswer(t, plain, head), key) {
			echoed++
		}
	}
	if echoed == 0 {
		t.Fatal("Fiber's default ErrorHandler repeats none of these heads: the test no longer shows what ErrorHandler is for")
	}
	safe := serve(fiber.Config{ErrorHandler: inventoryfiber.ErrorHandler})
	for what, head := range heads {
		got := benchfix.RawAnswer(t, safe, head)
		if strings.Contains(got, key) {
			t.Errorf("%s: the answer repeats the key: %q", what, got)
		}
		if !strings.HasPrefix(got, "HTTP/1.1 400 ") || !strings.HasSuffix(got, "\r\n\r\nBad Request") {
			t.Errorf("%s: %q, want a plain 400 Bad Request", what, got)
		}
	}
}
