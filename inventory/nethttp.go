package inventory

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// ServeHTTP makes the API an http.Handler for paths relative to where it is
// mounted: /inventory and /inventory/{petId}. Mount it under a prefix with
// http.StripPrefix:
//
//	mux.Handle("/v1/", http.StripPrefix("/v1", api))
//
// Any other path is answered 404 not_found with an Error body.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.serveRelative(w, r, r.URL.Path)
}

// Register mounts the routes on mux under prefix ("" or a path such as
// "/v1", without a trailing slash), with the standard mux's own matching
// ("{petId}" wildcards), so that no request is rewritten on its way in as
// with http.StripPrefix:
//
//	mux := http.NewServeMux()
//	if err := api.Register(mux, "/v1"); err != nil { ... }
//
// Every method is routed to the API, which answers the contract's 405s. It
// returns an error, instead of the mux's panic, when the patterns conflict
// with routes already on mux.
func (a *API) Register(mux *http.ServeMux, prefix string) (err error) {
	if mux == nil {
		return errors.New("inventory: Register: mux is nil")
	}
	if err := wire.CheckPrefix(prefix); err != nil {
		return fmt.Errorf("inventory: Register: %w", err)
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("inventory: Register: the mux refused the routes: %v", v)
		}
	}()
	for _, p := range wire.Paths("{petId}") {
		pattern := prefix + p.Pattern
		if !p.PetID && p.Route == wire.RouteItem {
			pattern += "{$}" // "/inventory/" alone, not the subtree
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			a.ServeRoute(w, r, Route(p.Route), r.PathValue("petId")) // "" without the wildcard
		})
	}
	return nil
}

// ServeRoute serves one request whose route an adapter for a router built
// on net/http has matched (package inventorygin uses it). Such an adapter
// must send every method of all three paths here, or the router answers
// them itself (its own 404s and 405s, a redirect of the trailing slash):
//
//	{prefix}/inventory           RouteList
//	{prefix}/inventory/          RouteItem, petID ""
//	{prefix}/inventory/{petId}   RouteItem
//
// An application mounts the API with ServeHTTP, Register or Middleware
// instead, which know these paths.
func (a *API) ServeRoute(w http.ResponseWriter, r *http.Request, route Route, petID string) {
	req := wire.Request{
		Method:        r.Method,
		Route:         int(route),
		PetID:         petID,
		Authorization: r.Header.Get("Authorization"),
	}
	if route == RouteList {
		req.IfNoneMatch = headerList(r.Header, "If-None-Match")
		req.CacheControl = headerList(r.Header, "Cache-Control")
		if _, claimed := w.Header()["Content-Encoding"]; !claimed {
			req.AcceptEncoding = headerList(r.Header, "Accept-Encoding")
		} // else a host's compression middleware encodes the answer: it gets the identity list, so that nothing is encoded twice
	} else { // a list reads no body: skip the lookups
		req.ContentType = r.Header.Get("Content-Type")
		req.ContentLength = r.ContentLength
		if r.Body != http.NoBody {
			req.BodyReader = r.Body
			req.SetReadDeadline = http.NewResponseController(w).SetReadDeadline // the body timeout's; ErrNotSupported where it cannot
		}
	}
	resp := a.serveObserved(r.Context(), &req)
	// A refused body is drained; one that stalled (408) is not coming.
	refused := resp.Status >= http.StatusBadRequest && resp.Status != http.StatusRequestTimeout
	writeResponse(w, &resp)
	if refused && r.ProtoMajor == 1 && r.Body != http.NoBody && r.ContentLength != 0 { // HTTP/2 ends a stream without a reset of the connection
		drainRefused(w, r.Body)
	}
}

// drainRefused sends the answer, then reads and discards what is left of
// body, within wire.DrainMaxBytes and wire.DrainMaxTime. net/http itself reads at
// most 256 KiB of an unread body, and none when the client asked to close
// the connection; it then closes the connection with the rest unread, so
// the kernel resets it and a client still sending its body may never read
// the answer. With the body read, the connection ends cleanly (or is
// reused). A ResponseWriter that cannot bound the read in time is left to
// its server.
func drainRefused(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(wire.DrainMaxTime)) != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, wire.DrainMaxBytes)
}

// headerList returns the value of the list-valued header key (in canonical
// form), its lines joined by commas when it came more than once, as RFC
// 9110 section 5.3 reads repeated field lines.
func headerList(h http.Header, key string) string {
	switch v := h[key]; len(v) {
	case 0:
		return ""
	case 1:
		return v[0]
	default:
		return strings.Join(v, ", ")
	}
}

// writeResponse copies resp to w, then releases it. A body in one piece
// (every answer but a large list) is written with one call.
func writeResponse(w http.ResponseWriter, resp *wire.Response) {
	h := w.Header()
	for _, fh := range wire.FixedHeaders {
		h[fh.Name] = fh.Values // shared, never written into
	}
	switch {
	case resp.Status == http.StatusNotModified:
		// No body and no length: net/http drops them from a 304 anyway.
	case resp.ContentLength != nil:
		h["Content-Length"] = resp.ContentLength // the cached list's (or a HEAD's), shared likewise
	default:
		h["Content-Length"] = []string{strconv.Itoa(resp.BodyLen())}
	}
	var own [wire.MaxOwnHeaders]wire.Header
	for _, hd := range own[:resp.OwnHeaders(&own)] {
		if hd.Values != nil {
			h[hd.Name] = hd.Values
		} else {
			h[hd.Name] = []string{hd.Value}
		}
	}
	w.WriteHeader(resp.Status)
	_, _ = resp.WriteBody(w) // a client gone away is nobody's error to report
	resp.Release()
}
