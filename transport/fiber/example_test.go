package inventoryfiber_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// Mount the inventory under /v1 of the host's Fiber app, built with NewApp
// (never fiber.New: NewApp sets what the adapter needs over the host's
// config).
func ExampleRegister() {
	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}

	app := inventoryfiber.NewApp(fiber.Config{DisableStartupMessage: true})
	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
		panic(err)
	}

	req := httptest.NewRequest(http.MethodPatch, "/v1/inventory/1", strings.NewReader(`{"quantity": 7}`))
	req.Header.Set("Authorization", "Bearer demo-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := app.Test(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 {"petId":1,"quantity":7,"status":"available"}
}

// Build the app that serves the API with NewApp: it sets what the adapter
// needs (streamed bodies, multipart left to the API, no answer or log line
// that repeats a malformed request head, key included) over the host's own
// settings. A head with a control byte in its Authorization value gets a
// plain 400, without the key.
func ExampleNewApp() {
	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}

	app := inventoryfiber.NewApp(fiber.Config{
		BodyLimit:             1 << 20, // the largest body of any route of the app
		DisableStartupMessage: true,
	})
	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
		panic(err)
	}
	if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = app.Listener(ln) }()
	defer func() { _ = app.Shutdown() }()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /v1/inventory HTTP/1.1\r\nHost: shop\r\nAuthorization: Bearer demo-key\x01\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, string(body), strings.Contains(string(body), "demo-key"))
	// Output: 400 Bad Request Bad Request false
}
