package adapter

import (
	"context"
	"io"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// Request is what an adapter copies out of its framework's request. Its
// strings and body need stay valid only until Serve returns: Serve copies
// whatever it keeps or hands to user code (an Authenticator), so an adapter
// may pass memory its framework reuses (fasthttp's).
type Request struct {
	Method        string
	Route         inventory.Route
	PetID         string // the raw {petId} path segment, for RouteItem
	Authorization string // the Authorization header value
	// AcceptEncoding, IfNoneMatch and CacheControl are the raw header
	// values (all of them, joined by commas, when a header came more than
	// once); read for RouteList only: a list is answered gzip or 304
	// according to the first two, and from the store's current state,
	// whatever inventory.WithMaxStaleness and inventory.WithStaleIfError
	// allow, when CacheControl holds no-cache.
	AcceptEncoding string
	IfNoneMatch    string
	CacheControl   string
	ContentType    string // the Content-Type header value
	// ContentLength is the declared length of a streamed body, -1 when
	// unknown (chunked); one larger than the limit is refused before
	// anything is read. Ignored for a buffered body.
	ContentLength int64
	// Body is read only for an update, at most to the body limit + 1
	// byte. The zero Body is an empty body.
	Body Body
	// SetReadDeadline, for a streamed body, sets the read deadline of the
	// connection it comes from (the zero time clears it), as
	// net.Conn.SetReadDeadline does. With it the API bounds the body's
	// arrival (inventory.WithBodyTimeout) and answers a body that stalls
	// 408 request_timeout; nil leaves that to the framework. A read that
	// fails on a deadline must return an error for which
	// errors.Is(err, os.ErrDeadlineExceeded) or a net.Error's Timeout().
	SetReadDeadline func(time.Time) error
}

// Body is a request body as the adapter has it: still to be read
// (StreamedBody) or already in memory (BufferedBody). The zero Body is
// empty.
type Body struct {
	r io.Reader
	b []byte
}

// StreamedBody is a body still to be read from r (a streamed fasthttp
// body, say). A nil r is an empty body.
func StreamedBody(r io.Reader) Body { return Body{r: r} }

// BufferedBody is a body already in memory (as fasthttp buffers it); it is
// used in place, not copied.
func BufferedBody(b []byte) Body { return Body{b: b} }

// Response is a complete answer to one request, for an adapter to copy
// out: set every header VisitHeaders names, write Status, then the body,
// whose length BodyLen gives for Content-Length. The body comes as pieces
// to write in order (Body): one piece for every answer but a large list,
// whose pieces are shared by every list in flight and must never be copied
// into one buffer per response (write them one by one, or hand BodyReader
// to the framework, as fasthttp's SetBodyStream takes it); none for a 304
// or for the answer to HEAD, which carries the Content-Length of the GET's
// body among the headers VisitHeaders names.
// The body must not be modified. Call Release once the body has been
// written; forgetting it only costs garbage, and a second Release does
// nothing.
type Response struct {
	Status int

	w   wire.Response
	one [1][]byte // Body's answer for a body in one piece
	req wire.Request
}

// Body returns the body as pieces to write in order: one piece for every
// answer but a large list, none when there is no body (a 304, the answer
// to HEAD).
func (r *Response) Body() [][]byte {
	switch {
	case r.w.Pieces != nil:
		return r.w.Pieces
	case len(r.w.Body) == 0:
		return nil
	}
	r.one[0] = r.w.Body
	return r.one[:]
}

// BodyLen returns the length of the body in bytes, for Content-Length.
func (r *Response) BodyLen() int { return r.w.BodyLen() }

// BodyReader returns a reader of the body. It implements io.WriterTo, so
// that io.Copy and fasthttp's SetBodyStream write the pieces straight to
// their writer without a buffer of their own. It stays valid after Release
// when Stable reports true.
func (r *Response) BodyReader() io.Reader {
	if r.w.Pieces == nil {
		return wire.NewPiecesReader([][]byte{r.w.Body})
	}
	return wire.NewPiecesReader(r.w.Pieces)
}

// VisitHeaders calls set for every header of the response: those every
// response carries (Content-Type, except on a 304, and
// X-Content-Type-Options), Cache-Control (no-store, or a list's
// "private, no-cache", with ", stale-if-error=N" under
// inventory.WithStaleIfError), a list's ETag and Vary and, when its body
// is gzip, Content-Encoding, a stale list's Age and Cache-Status, and
// those of this answer (Allow,
// WWW-Authenticate, Retry-After; Content-Length on the answer to HEAD,
// which has no body to take it from). Names come in canonical form
// (textproto.CanonicalMIMEHeaderKey, so "Www-Authenticate" and "Etag"):
// the form both net/http and fasthttp store and look up, so that a host's
// middleware finds and replaces them. A header is set at most once.
func (r *Response) VisitHeaders(set func(name, value string)) { r.w.VisitHeaders(set) }

// Stable reports whether the body stays valid and unchanged after Release
// (a cached list, or a body not from the pool), so that an adapter may
// hand it to its framework without copying it.
func (r *Response) Stable() bool { return r.w.Buf == nil }

// Release returns the body's buffer to the pool. The Response must not be
// used afterwards; a second Release does nothing.
func (r *Response) Release() {
	r.w.Release()
	r.one[0] = nil
}

// Serve answers one request with api, applying every rule of the contract
// in its order: route (method), authentication, petId, media type, body
// size, body, then the store. It never panics: a panic below it (in a
// store, say) is logged with its stack and answered 500 internal. An
// unknown Route is an adapter bug, answered 500 too. The answer is a
// pointer, so that a copy cannot release its buffer a second time.
func Serve(ctx context.Context, api *inventory.API, req Request) *Response {
	r := &Response{req: wire.Request{ // one allocation for the request's and the answer's state
		Method:         req.Method,
		Route:          int(req.Route),
		PetID:          req.PetID,
		Authorization:  req.Authorization,
		AcceptEncoding: req.AcceptEncoding,
		IfNoneMatch:    req.IfNoneMatch,
		CacheControl:   req.CacheControl,
		ContentType:    req.ContentType,
		ContentLength:  req.ContentLength,
		BodyReader:     req.Body.r,
		BodyBytes:      req.Body.b,
	}}
	if req.Body.r != nil {
		r.req.SetReadDeadline = req.SetReadDeadline
	}
	r.w = wire.Serve(api, ctx, &r.req)
	r.req = wire.Request{} // the adapter's memory is not kept past Serve
	r.Status = r.w.Status
	return r
}
