package inventorygin_test

// The benchmarks measure what the library costs a Gin host: each one runs
// the inventory API mounted with Register ("lib") beside the least a Gin
// handler can do for the same work ("bare"), in the same run, through the
// same entry point (engine.ServeHTTP with one reusable ResponseWriter, no
// sockets), so that lib/bare is the ratio to read:
//
//	go test -run '^$' -bench . -benchmem -count 3
//
// The bare handlers do the work the contract asks for and nothing more:
// check the bearer header (a plain comparison), then for a list write
// bytes encoded once in advance, and for an update parse the petId, decode
// {"quantity":n} with encoding/json, set a map entry under a mutex and
// encode the item with encoding/json. Both sides set the same response
// headers (Content-Type, Cache-Control, X-Content-Type-Options,
// Content-Length), and setup checks that both answer 200 with the same
// bytes, so neither side can be measuring an error path.
//
// A third side, "bare+sha256", is the bare handler with a constant-time
// key check instead of the plain comparison: the SHA-256 digest of the
// presented key compared in constant time with the configured key's (about
// 100 ns), the textbook way, which the library used at first. It shows
// what such a check costs; the bare handler skips it.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

func benchEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	return gin.New()
}

func benchLibEngine(b *testing.B, items []inventory.Item) *gin.Engine {
	b.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(benchfix.Key))
	if err != nil {
		b.Fatal(err)
	}
	engine := benchEngine()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		b.Fatal(err)
	}
	return engine
}

// benchSetHeaders sets the headers every inventory response carries.
func benchSetHeaders(c *gin.Context, contentLength string) {
	c.Header("Cache-Control", "no-store")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Length", contentLength)
}

// benchBareEngine returns the bare handlers; withSHA256 swaps the plain
// comparison of the Authorization header for benchfix.SHA256Authorized.
func benchBareEngine(items []inventory.Item, withSHA256 bool) *gin.Engine {
	inv := benchfix.NewBareInventory(items)
	listLength := strconv.Itoa(len(inv.List))

	engine := benchEngine()
	v1 := engine.Group("/v1")
	v1.GET("/inventory", func(c *gin.Context) {
		if !benchfix.Authorized(c.Request.Header.Get("Authorization"), withSHA256) {
			c.Status(http.StatusUnauthorized)
			return
		}
		benchSetHeaders(c, listLength)
		c.Header("Cache-Control", benchfix.ListCacheControl)
		c.Header("Etag", benchfix.BareETag)
		c.Header("Vary", "Accept-Encoding")
		c.Data(http.StatusOK, "application/json", inv.List)
	})
	v1.PATCH("/inventory/:petId", func(c *gin.Context) {
		if !benchfix.Authorized(c.Request.Header.Get("Authorization"), withSHA256) {
			c.Status(http.StatusUnauthorized)
			return
		}
		id, err := strconv.ParseInt(c.Param("petId"), 10, 64)
		if err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		var in struct {
			Quantity int `json:"quantity"`
		}
		if err := json.NewDecoder(c.Request.Body).Decode(&in); err != nil || in.Quantity < 0 {
			c.Status(http.StatusBadRequest)
			return
		}
		it, ok := inv.Set(id, in.Quantity)
		if !ok {
			c.Status(http.StatusNotFound)
			return
		}
		out, err := json.Marshal(it)
		if err != nil {
			c.Status(http.StatusInternalServerError)
			return
		}
		benchSetHeaders(c, strconv.Itoa(len(out)))
		c.Data(http.StatusOK, "application/json", out)
	})
	return engine
}

// benchCheck fails b unless w holds a 200 with exactly want and the
// contract's headers.
var benchSides = []benchfix.Side{
	{Name: "lib", Handler: func(b *testing.B, items []inventory.Item) http.Handler { return benchLibEngine(b, items) }},
	{Name: "bare", Handler: func(_ *testing.B, items []inventory.Item) http.Handler { return benchBareEngine(items, false) }},
	{Name: "bare+sha256", Handler: func(_ *testing.B, items []inventory.Item) http.Handler { return benchBareEngine(items, true) }},
}

func BenchmarkList(b *testing.B)   { benchfix.BenchmarkList(b, benchSides) }
func BenchmarkUpdate(b *testing.B) { benchfix.BenchmarkUpdate(b, benchSides) }
