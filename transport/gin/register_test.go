package inventorygin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

func newAPI(t *testing.T) *inventory.API {
	t.Helper()
	store, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	return api
}

func TestRegisterRejectsNil(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	if err := inventorygin.Register(nil, newAPI(t)); err == nil {
		t.Error("Register(nil router) returned no error")
	}
	if err := inventorygin.Register(gin.New(), nil); err == nil {
		t.Error("Register(nil api) returned no error")
	}
}

// A host that already serves the paths gets an error, not gin's panic.
func TestRegisterConflictIsAnError(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.GET("/v1/inventory", func(*gin.Context) {})
	err := inventorygin.Register(engine.Group("/v1"), newAPI(t))
	if err == nil || !strings.Contains(err.Error(), "gin refused the routes") {
		t.Fatalf("Register on taken paths: err = %v, want gin's refusal as an error", err)
	}
}

// A large list comes from the API in pieces shared by every list in
// flight. Over a real socket, the body is the whole inventory, in order,
// with its Content-Length, first, from the cache, and after an update.
func TestLargeListOverSocket(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	const n = 5000
	items := make([]inventory.Item, n)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i*3 + 1), Quantity: i % 100, Status: inventory.StatusPending}
	}
	store, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine)
	defer srv.Close()
	for round := range 3 {
		if round == 2 {
			items[4000].Quantity = 77
			if _, err := store.SetQuantity(context.Background(), items[4000].PetID, 77); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := json.Marshal(items)
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/inventory", nil)
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.ContentLength != int64(len(want)) {
			t.Fatalf("round %d: %d, %d bytes (Content-Length %d, err %v); want 200 and the %d bytes of the inventory", round, resp.StatusCode, len(body), resp.ContentLength, err, len(want))
		}
	}
}
