package inventoryfiber

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/inventory"
)

// Register mounts the inventory routes on router, which may be the app or
// any group (the group's path is the prefix):
//
//	GET   /inventory
//	PATCH /inventory/{petId}
//
// The routes are registered for every method the app serves, so that other
// methods get the contract's 405 with Allow; the app's settings are not
// changed. The API decides every status; this adapter only copies the
// request in and the response out.
//
// It returns an error, instead of fiber's panic, when fiber refuses the
// routes.
func Register(router fiber.Router, api *inventory.API) (err error) {
	if router == nil || api == nil {
		return errors.New("inventoryfiber: Register: router and api must not be nil")
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("inventoryfiber: Register: fiber refused the routes: %v", v)
		}
	}()
	router.All("/inventory", func(c *fiber.Ctx) error {
		// Without StrictRouting (fiber's default) "/inventory/" lands here;
		// it is the item route with an empty petId, as on every transport.
		if strings.HasSuffix(c.Path(), "/") {
			return serve(c, api, inventory.RouteItem, "")
		}
		return serve(c, api, inventory.RouteList, "")
	})
	// With StrictRouting, "/inventory/" needs its own route.
	router.All("/inventory/", func(c *fiber.Ctx) error {
		return serve(c, api, inventory.RouteItem, "")
	})
	router.All("/inventory/:petId", func(c *fiber.Ctx) error {
		return serve(c, api, inventory.RouteItem, c.Params("petId"))
	})
	return nil
}

// serve copies the request in and the response out. fasthttp reuses the
// memory behind c.Params, c.Get and the body once the handler returns
// (fiber issues #426, #2902); Serve copies whatever it keeps, so they are
// passed as they are.
func serve(c *fiber.Ctx, api *inventory.API, route inventory.Route, petID string) error {
	req := inventory.Request{
		Method:        c.Method(),
		Route:         route,
		PetID:         petID,
		Authorization: c.Get(fiber.HeaderAuthorization),
		ContentType:   c.Get(fiber.HeaderContentType),
	}
	if s := c.Context().RequestBodyStream(); s != nil {
		// fiber.Config.StreamRequestBody: the body is still on the wire,
		// and the API reads no more of it than its limit + 1 byte.
		req.Body = s
		req.ContentLength = max(int64(c.Request().Header.ContentLength()), -1)
	} else {
		// fasthttp has buffered the body (up to BodyLimit); raw, with no
		// Content-Encoding decoding, as on net/http.
		req.RawBody = c.Request().Body()
		if req.RawBody == nil {
			req.RawBody = []byte{}
		}
		req.ContentLength = int64(len(req.RawBody))
	}
	resp := api.Serve(c.UserContext(), req)
	c.Status(resp.Status)
	resp.VisitHeaders(func(name, value string) { c.Set(name, value) })
	c.Response().SetBody(resp.Body) // copies
	resp.Release()
	return nil
}
