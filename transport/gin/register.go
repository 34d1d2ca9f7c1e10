package inventorygin

import (
	"errors"
	"fmt"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/inventory"
)

// Register mounts the inventory routes on router, which may be the engine
// or any group (the group's path is the prefix):
//
//	GET   /inventory
//	PATCH /inventory/{petId}
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
	router.Any("/inventory", func(c *gin.Context) {
		api.ServeRoute(c.Writer, c.Request, inventory.RouteList, "")
	})
	// "/inventory/" is the item route with an empty petId (a 400), not a
	// redirect to the list.
	router.Any("/inventory/", func(c *gin.Context) {
		api.ServeRoute(c.Writer, c.Request, inventory.RouteItem, "")
	})
	router.Any("/inventory/:petId", func(c *gin.Context) {
		api.ServeRoute(c.Writer, c.Request, inventory.RouteItem, c.Param("petId"))
	})
	return nil
}
