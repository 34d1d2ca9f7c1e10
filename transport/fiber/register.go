package inventoryfiber

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
// (fiber issues #426, #2902): Serve is done with them when it returns, and
// the Authorization value, which reaches user code (an Authenticator), is
// cloned.
func serve(c *fiber.Ctx, api *inventory.API, route inventory.Route, petID string) error {
	body, length := requestBody(c)
	resp := api.Serve(c.UserContext(), inventory.Request{
		Method:        c.Method(),
		Route:         route,
		PetID:         petID,
		Authorization: strings.Clone(c.Get(fiber.HeaderAuthorization)),
		ContentType:   c.Get(fiber.HeaderContentType),
		ContentLength: length,
		Body:          body,
	})
	c.Status(resp.Status)
	resp.VisitHeaders(func(name, value string) { c.Set(name, value) })
	c.Response().SetBody(resp.Body) // copies
	resp.Release()
	return nil
}

// requestBody returns the raw body (no Content-Encoding decoding, as on
// net/http) and its declared length. With fiber.Config.StreamRequestBody
// the body is still on the wire: the API then reads no more than its limit
// + 1 byte, so a huge body is refused without being buffered. Otherwise
// fasthttp has already buffered it (up to BodyLimit).
func requestBody(c *fiber.Ctx) (io.Reader, int64) {
	if s := c.Context().RequestBodyStream(); s != nil {
		n := int64(c.Request().Header.ContentLength())
		if n < 0 {
			n = -1 // chunked or unknown
		}
		return s, n
	}
	raw := c.Request().Body()
	return bytes.NewReader(raw), int64(len(raw))
}
