package inventorygin

import (
	"errors"
	"fmt"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
)

// Register mounts the inventory routes on router, which may be the engine
// or any group (the group's path is the prefix):
//
//	GET, HEAD /inventory
//	PATCH     /inventory/{petId}
//
// Every standard method is registered on both paths, so that other methods
// get the contract's 405 with Allow even though gin's
// HandleMethodNotAllowed is off; the engine's settings are not changed.
// Methods outside the standard set (PROPFIND, a lowercase get) never reach
// these routes: give the engine NoRoute's handler for them.
// The API decides every status; this adapter only hands it the request.
//
// It returns an error, instead of gin's panic, when the paths are already
// taken on router.
func Register(router gin.IRouter, api *inventory.API) (err error) {
	if router == nil || api == nil {
		return errors.New("inventorygin: Register: router and api must not be nil")
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("inventorygin: Register: gin refused the routes: %v", v)
		}
	}()
	for _, p := range adapter.Paths(":petId") {
		router.Any(p.Pattern, func(c *gin.Context) {
			api.ServeRoute(c.Writer, c.Request, p.Route, c.Param("petId")) // "" without the wildcard
		})
	}
	return nil
}
