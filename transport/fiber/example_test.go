package inventoryfiber_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// Mount the inventory under /v1 of an existing Fiber app.
func ExampleRegister() {
	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}

	app := fiber.New(fiber.Config{DisableStartupMessage: true})
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
