package inventoryfiber

import (
	"errors"
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

// serveStalledBodies bounds fasthttp's read of a body on the API's paths
// before any handler (the whole body, or its first 8 KiB with
// StreamRequestBody) by the API's body timeout, and lets the API answer
// that read's timeout: fasthttp would answer it through fiber's
// ErrorHandler (a plain-text 408), after the server's ReadTimeout.
func serveStalledBodies(app *fiber.App, api *inventory.API, prefix string, timeout time.Duration, bodies *pendingBodies) {
	cfg := app.Config()
	srv := app.Server()
	prevRecv, prevErr := srv.HeaderReceived, srv.ErrorHandler
	if prevErr == nil {
		return // fiber.New always sets one; without it there is nothing to hand other errors to
	}
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
