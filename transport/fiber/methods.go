package inventoryfiber

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
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
//	app := fiber.New(cfg)
//	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil { ... }
//	if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil { ... }
//
// It wraps the handler, the error handler and the HeaderReceived hook of
// app.Server() (calling a hook set before it), so call it on the app that
// serves (not one mounted in another), after fiber.New and before
// serving. The app's middleware does not run for these requests, as it
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
		prevRecv, prevErr := srv.HeaderReceived, srv.ErrorHandler
		srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			var rc fasthttp.RequestConfig
			if prevRecv != nil {
				rc = prevRecv(h)
			}
			if bodies.note(h, prefix, cfg.CaseSensitive) && rc.ReadTimeout == 0 {
				rc.ReadTimeout = timeout
			}
			return rc
		}
		srv.ErrorHandler = func(fctx *fasthttp.RequestCtx, err error) {
			pb, ok := bodies.get(&fctx.Request.Header)
			var ne net.Error
			if !ok || !errors.As(err, &ne) || !ne.Timeout() {
				prevErr(fctx, err)
				return
			}
			// fasthttp has reset the request: the API answers from what
			// HeaderReceived kept of it, with the body's read error.
			c := app.AcquireCtx(fctx)
			write(c, adapter.Serve(c.UserContext(), api, adapter.Request{
				Method: pb.method, Route: pb.route, PetID: pb.petID, Authorization: pb.authorization,
				ContentType: pb.contentType, ContentLength: pb.length, Body: adapter.StreamedBody(failedRead{err}),
			}))
			app.ReleaseCtx(c)
		}
	}
	return nil
}

// pendingBodies holds what the API needs of the requests on its paths
// whose body fasthttp is reading before any handler runs, from
// HeaderReceived until the handler or the error handler takes it: at most
// one per connection, and only while its body is read.
type pendingBodies struct {
	n  atomic.Int64 // len(m): most requests find none and take no lock
	mu sync.Mutex
	m  map[*fasthttp.RequestHeader]pendingBody
}

type pendingBody struct {
	method, petID, authorization, contentType string
	route                                     inventory.Route
	length                                    int64
}

// note keeps what the API needs of h when it is a request on the API's
// paths with a body, and reports whether it is.
func (p *pendingBodies) note(h *fasthttp.RequestHeader, prefix string, caseSensitive bool) bool {
	n := h.ContentLength() // -1 chunked, -2 none
	path, _, _ := strings.Cut(utils.UnsafeString(h.RequestURI()), "?")
	route, petID, _ := adapter.Match(path, prefix, caseSensitive)
	if route == 0 || n == 0 || n == -2 {
		p.take(h) // one left by an earlier request on this connection, if any
		return false
	}
	pb := pendingBody{
		method: string(h.Method()), petID: strings.Clone(petID), route: route, length: int64(max(n, -1)),
		authorization: string(h.Peek(fiber.HeaderAuthorization)), contentType: string(h.ContentType()),
	}
	p.mu.Lock()
	if _, ok := p.m[h]; !ok {
		p.n.Add(1)
	}
	p.m[h] = pb
	p.mu.Unlock()
	return true
}

// take forgets h's pending body, and reports whether there was one.
func (p *pendingBodies) take(h *fasthttp.RequestHeader) bool {
	_, ok := p.get(h)
	return ok
}

// get returns and forgets h's pending body.
func (p *pendingBodies) get(h *fasthttp.RequestHeader) (pendingBody, bool) {
	if p.n.Load() == 0 {
		return pendingBody{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pb, ok := p.m[h]
	if ok {
		delete(p.m, h)
		p.n.Add(-1)
	}
	return pb, ok
}

// failedRead is a body whose read failed with err.
type failedRead struct{ err error }

func (f failedRead) Read([]byte) (int, error) { return 0, f.err }
