package inventoryfiber

import (
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	"github.com/valyala/fasthttp"
)

// ServeOtherMethods lets api answer the requests at and below
// prefix+"/inventory" (prefix as given to app.Group for Register, "" for
// the app) that fasthttp and fiber answer themselves before any handler
// runs:
//
//   - a method fiber routes nowhere: one outside fiber.Config.RequestMethods
//     (FOO, PROPFIND by default) or in lowercase (get), which fiber answers
//     with its own 400 "Invalid http method"; the API answers it with the
//     contract's 405 and Allow;
//   - an update whose body stalls in what fasthttp reads of it before the
//     handler (the whole body, or its first 8 KiB with StreamRequestBody),
//     which fasthttp would bound with the server's ReadTimeout and answer
//     with fiber's plain-text 408; that read is bounded by the API's
//     BodyTimeout instead, and the API answers the contract's 408
//     request_timeout, after its checks (a request without a key is 401).
//
// Every other request is fiber's as before.
//
//	app := inventoryfiber.NewApp(cfg)
//	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil { ... }
//	if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil { ... }
//
// It wraps the handler, the error handler and the HeaderReceived hook of
// app.Server() (calling a hook set before it), so call it on the app that
// serves (not one mounted in another), after NewApp (or fiber.New) and
// before serving. The app's middleware does not run for these requests, as it
// does not for fiber's own answers.
func ServeOtherMethods(app *fiber.App, api *inventory.API, prefix string) error {
	if app == nil || api == nil {
		return errors.New("inventoryfiber: ServeOtherMethods: app and api must not be nil")
	}
	if err := adapter.CheckPrefix(prefix); err != nil {
		return fmt.Errorf("inventoryfiber: ServeOtherMethods: %w", err)
	}
	cfg := app.Config()
	known := make(map[string]bool, len(cfg.RequestMethods))
	for _, m := range cfg.RequestMethods {
		known[m] = true
	}
	srv := app.Server()
	bodies := &pendingBodies{m: map[*fasthttp.RequestHeader]pendingBody{}}
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if bodies.take(&fctx.Request.Header) {
			// The body was read in time: the deadline was this body's, not
			// the connection's.
			_ = fctx.Conn().SetReadDeadline(time.Time{})
		}
		if !known[string(fctx.Method())] { // fiber's own test, which makes it answer 400
			c := app.AcquireCtx(fctx)
			// c.Path is the path fiber routes on (as sent, unescaped
			// with Config.UnescapePath), not fasthttp's cleaned one.
			route, petID, _ := adapter.Match(c.Path(), prefix, cfg.CaseSensitive)
			ok := route != 0 // a deeper path is no route of Register's: fiber's
			if ok {
				_ = serve(c, api, route, petID)
			}
			app.ReleaseCtx(c)
			if ok {
				return
			}
		}
		next(fctx)
	}
	if timeout := api.BodyTimeout(); timeout > 0 {
		serveStalledBodies(app, api, prefix, timeout, bodies)
	}
	return nil
}
