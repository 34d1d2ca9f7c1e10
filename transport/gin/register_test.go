package inventorygin_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/internal/benchfix"
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
	api, check := benchfix.LargeList(t)
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine)
	defer srv.Close()
	check(srv.URL + "/v1/inventory")
	benchfix.Head(t, srv.URL+"/v1/inventory", srv.URL+"/v1/inventory/1")
}

// A client sending an update body far past the limit reads its 413 on
// Gin, on keep-alive connections and on those it asked to close.
func TestLargeBodyAlwaysReadsItsAnswer(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), newAPI(t)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine)
	defer srv.Close()
	benchfix.RefusedLargeBodies(t, srv.URL, "k", 50)
}

// An update body that stalls is answered 408 request_timeout once the
// API's body timeout passes, not gin's or the server's answer.
func TestStalledBodyOverSocket(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := inventorygin.Register(engine.Group("/v1"), benchfix.StallAPI(t)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine)
	defer srv.Close()
	benchfix.StalledBody(t, srv.URL+"/v1/inventory/1", benchfix.StallTimeout)
}
