package inventorygin

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/inventory"
)

// NoRoute returns a handler for the engine's NoRoute that lets the API
// answer the requests under prefix (the path of the group given to
// Register, "" for the engine) that gin routes nowhere: those with a
// method outside the standard set (PROPFIND, FOO, a lowercase get). Gin
// matches the method before the path, and registers only upper-case
// methods, so such requests never reach the routes Register adds and gin
// answers its plain-text 404; with this handler they get the contract's
// 405 with Allow.
//
//	noRoute, err := inventorygin.NoRoute(api, "/v1")
//	if err != nil { ... }
//	engine.NoRoute(noRoute)
//
// Any other request passes to the NoRoute handlers after it, or to gin's
// own 404. With gin's HandleMethodNotAllowed on, pass it to NoMethod too.
func NoRoute(api *inventory.API, prefix string) (gin.HandlerFunc, error) {
	if api == nil {
		return nil, fmt.Errorf("inventorygin: NoRoute: api must not be nil")
	}
	mw, err := api.Middleware(prefix)
	if err != nil {
		return nil, fmt.Errorf("inventorygin: NoRoute: %w", err)
	}
	// The API writes the answer of a request it serves and leaves the
	// others to this handler, which writes nothing.
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	return func(c *gin.Context) {
		h.ServeHTTP(c.Writer, c.Request)
		if c.Writer.Written() {
			c.Abort()
		}
	}, nil
}
