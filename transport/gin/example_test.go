package inventorygin_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

// Mount the inventory under /v1 of an existing Gin engine.
func ExampleRegister() {
	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}

	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		panic(err)
	}

	srv := httptest.NewServer(engine)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/v1/inventory/1", strings.NewReader(`{"quantity": 7}`))
	req.Header.Set("Authorization", "Bearer demo-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 {"petId":1,"quantity":7,"status":"available"}
}

// Let the API answer methods gin routes nowhere, such as PROPFIND.
func ExampleNoRoute() {
	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}

	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		panic(err)
	}
	noRoute, err := inventorygin.NoRoute(api, "/v1")
	if err != nil {
		panic(err)
	}
	engine.NoRoute(noRoute)

	srv := httptest.NewServer(engine)
	defer srv.Close()
	for _, path := range []string{"/v1/inventory", "/elsewhere"} {
		req, _ := http.NewRequest("PROPFIND", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer demo-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Allow"), string(body))
	}
	// Output:
	// 405 GET, HEAD {"code":"method_not_allowed","message":"method PROPFIND is not allowed here; this path allows GET, HEAD","status":405}
	// 404  404 page not found
}
