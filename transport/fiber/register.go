package inventoryfiber

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
)

// Register mounts the inventory routes on router, which may be the app or
// any group (the group's path is the prefix):
//
//	GET, HEAD /inventory
//	PATCH     /inventory/{petId}
//
// The routes are registered for every method the app serves, so that other
// methods get the contract's 405 with Allow; the app's settings are not
// changed. A method outside fiber.Config.RequestMethods, or in lowercase,
// never reaches a route (fiber answers it 400 before any handler runs):
// see ServeOtherMethods. The API decides every status; this adapter only copies the
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
	for _, p := range adapter.Paths(":petId") {
		router.All(p.Pattern, func(c *fiber.Ctx) error {
			// Without StrictRouting (fiber's default) "/inventory/" lands
			// on the list's pattern too: Resolve makes it the item route.
			route, petID := p.Resolve(c.Path(), c.Params("petId")) // "" without the wildcard
			return serve(c, api, route, petID)
		})
	}
	return nil
}

// serve copies the request in and the response out. fasthttp reuses the
// memory behind c.Params, c.Get and the body once the handler returns
// (fiber issues #426, #2902); Serve copies whatever it keeps, so they are
// passed as they are.
func serve(c *fiber.Ctx, api *inventory.API, route inventory.Route, petID string) error {
	var stream *countingReader
	req := adapter.Request{
		Method:        c.Method(),
		Route:         route,
		PetID:         petID,
		Authorization: c.Get(fiber.HeaderAuthorization),
	}
	if route == inventory.RouteList {
		// The list reads no body, but is negotiated and conditional.
		req.AcceptEncoding = headerList(c, fiber.HeaderAcceptEncoding)
		req.IfNoneMatch = headerList(c, fiber.HeaderIfNoneMatch)
		req.CacheControl = headerList(c, fiber.HeaderCacheControl)
	}
	if s := c.Context().RequestBodyStream(); s != nil {
		// fiber.Config.StreamRequestBody: the body is still on the wire,
		// and the API reads no more of it than its limit + 1 byte (none of
		// a list's, nor of a 405's: what is left is drained below).
		stream = &countingReader{r: s}
		req.Body = adapter.StreamedBody(stream)
		req.ContentLength = max(int64(c.Request().Header.ContentLength()), -1)
		if route == inventory.RouteItem {
			req.SetReadDeadline = c.Context().Conn().SetReadDeadline // the API's body timeout
		}
	} else if route != inventory.RouteList {
		// fasthttp has buffered the body (up to BodyLimit); raw, with no
		// Content-Encoding decoding, as on net/http.
		req.Body = adapter.BufferedBody(c.Request().Body())
	}
	if route == inventory.RouteItem {
		req.ContentType = utils.UnsafeString(c.Request().Header.ContentType()) // valid until Serve returns, as Request allows; no key lookup
	}
	resp := adapter.Serve(c.UserContext(), api, req)
	switch {
	case resp.Status == fiber.StatusRequestTimeout:
		c.Context().SetConnectionClose() // the body stalled: nothing to drain
	case stream != nil && !stream.eof && req.ContentLength != 0:
		// The API refused the body without reading it all (413, 401, a
		// list or a 405 that reads none): see drainRefused.
		drainRefused(c.Context(), stream, req.ContentLength)
	}
	write(c, resp)
	return nil
}

// write copies resp out to c's response, then releases it.
func write(c *fiber.Ctx, resp *adapter.Response) {
	c.Status(resp.Status)
	h := &c.Response().Header
	resp.VisitHeaders(func(name, value string) {
		// The names come in the canonical form fasthttp normalises to, so
		// SetCanonical skips c.Set's normalising copy and a host's
		// middleware still finds (and replaces) them. It copies both, so
		// unsafe views of the strings do.
		h.SetCanonical(utils.UnsafeBytes(name), utils.UnsafeBytes(value))
	})
	switch body := resp.Body(); {
	case len(body) > 1:
		// A large list, in pieces shared by every list in flight: stream
		// them (its WriteTo writes each straight to the connection's
		// writer) rather than copy them into one buffer per response.
		c.Response().SetBodyStream(resp.BodyReader(), resp.BodyLen())
	case len(body) == 0:
		c.Response().ResetBody() // a 304, or an empty body
	case resp.Stable():
		c.Response().SetBodyRaw(body[0]) // not reused: no copy needed
	default:
		c.Response().SetBody(body[0]) // copies, before the buffer is reused
	}
	resp.Release()
}

// headerList returns the value of the list-valued request header key, its
// lines joined by commas when it came more than once (RFC 9110 section
// 5.3), as adapter.Request asks; c.Get reads the first line only.
func headerList(c *fiber.Ctx, key string) string {
	switch v := c.Request().Header.PeekAll(key); len(v) {
	case 0:
		return ""
	case 1:
		return utils.UnsafeString(v[0]) // valid until Serve returns, as Request allows
	default:
		return string(bytes.Join(v, []byte(", ")))
	}
}
