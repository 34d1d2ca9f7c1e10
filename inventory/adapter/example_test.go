package adapter_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// An adapter copies a request in, calls Serve, and copies the answer out.
// Here the "framework" is a plain function; inventoryfiber does the same
// with a fiber.Ctx.
func ExampleServe() {
	store, _ := memstore.New(inventory.Item{PetID: 3, Quantity: 1, Status: inventory.StatusPending})
	api, err := inventory.New(store, inventory.WithAPIKeys("key-1"))
	if err != nil {
		panic(err)
	}
	resp := adapter.Serve(context.Background(), api, adapter.Request{
		Method:        http.MethodPatch,
		Route:         inventory.RouteItem,
		PetID:         "3",
		Authorization: "Bearer key-1",
		ContentType:   "application/json",
		Body:          adapter.BufferedBody([]byte(`{"quantity": 7}`)),
	})
	defer resp.Release() // after the body is written
	var headers []string
	resp.VisitHeaders(func(name, value string) { headers = append(headers, name+": "+value) })
	body := resp.Body() // one piece: only a large list comes in several
	fmt.Println(resp.Status, string(body[0]))
	fmt.Println(strings.Join(headers, "\n"))
	// Output:
	// 200 {"petId":3,"quantity":7,"status":"pending"}
	// Content-Type: application/json
	// X-Content-Type-Options: nosniff
	// Cache-Control: no-store
}
