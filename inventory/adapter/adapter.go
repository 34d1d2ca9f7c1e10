package adapter

import (
	"context"
	"io"

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
	ContentType   string // the Content-Type header value
	// ContentLength is the declared length of a streamed body, -1 when
	// unknown (chunked); one larger than the limit is refused before
	// anything is read. Ignored for a body from BodyBytes.
	ContentLength int64
	// Body is read only for an update, at most to the body limit + 1
	// byte. The zero Body is an empty body.
	Body Body
}

// Body is a request body as the adapter has it: still to be read
// (BodyReader) or already in memory (BodyBytes). The zero Body is empty.
type Body struct {
	r io.Reader
	b []byte
}

// BodyReader is a body still to be read from r (a streamed fasthttp body,
// say). A nil r is an empty body.
func BodyReader(r io.Reader) Body { return Body{r: r} }

// BodyBytes is a body already in memory (as fasthttp buffers it); it is
// used in place, not copied.
func BodyBytes(b []byte) Body { return Body{b: b} }

// Response is a complete answer to one request, for an adapter to copy
// out: set every header VisitHeaders names, write Status, then the body.
// A body is one piece (Body) except a large list's, which comes in pieces
// shared by every list in flight: write it with WriteBody (net/http) or
// hand BodyReader to the framework (fasthttp's SetBodyStream), so that it
// is never copied into one buffer per response. Call Release once the body
// has been written; forgetting it only costs garbage. The body must not be
// modified: it may be shared with other responses.
type Response struct {
	Status int

	w wire.Response
}

// Body returns the body when it is in one piece, and false when it is in
// pieces (see WriteBody and BodyReader). Every answer but a large list is
// in one piece.
func (r *Response) Body() ([]byte, bool) { return r.w.Body, r.w.Pieces == nil }

// BodyLen returns the length of the body in bytes, for Content-Length.
func (r *Response) BodyLen() int { return r.w.BodyLen() }

// WriteBody writes the body to w, piece by piece, without copying it.
func (r *Response) WriteBody(w io.Writer) (int64, error) { return r.w.WriteBody(w) }

// BodyReader returns a reader of the body. It implements io.WriterTo, so
// that io.Copy and fasthttp's SetBodyStream write the pieces straight to
// their writer. It stays valid after Release when Stable reports true.
func (r *Response) BodyReader() io.Reader {
	if r.w.Pieces == nil {
		return wire.NewPiecesReader([][]byte{r.w.Body})
	}
	return wire.NewPiecesReader(r.w.Pieces)
}

// VisitHeaders calls set for every header of the response, the ones every
// response carries (Content-Type, Cache-Control, X-Content-Type-Options)
// and those of this one (Allow, WWW-Authenticate, Retry-After). Names come
// in canonical form (textproto.CanonicalMIMEHeaderKey, so
// "Www-Authenticate"): the form both net/http and fasthttp store and look
// up, so that a host's middleware finds and replaces them. A header is set
// at most once.
func (r *Response) VisitHeaders(set func(name, value string)) { r.w.VisitHeaders(set) }

// Stable reports whether the body stays valid and unchanged after Release
// (a cached list, or a body not from the pool), so that an adapter may
// hand it to its framework without copying it.
func (r *Response) Stable() bool { return r.w.Buf == nil }

// Release returns the body's buffer to the pool. The Response must not be
// used afterwards; a second Release does nothing.
func (r *Response) Release() { r.w.Release() }

// Serve answers one request with api, applying every rule of the contract
// in its order: route (method), authentication, petId, media type, body
// size, body, then the store. It never panics: a panic below it (in a
// store, say) is logged with its stack and answered 500 internal. An
// unknown Route is an adapter bug, answered 500 too.
func Serve(ctx context.Context, api *inventory.API, req Request) Response {
	w := wire.Serve(api, ctx, &wire.Request{
		Method:        req.Method,
		Route:         int(req.Route),
		PetID:         req.PetID,
		Authorization: req.Authorization,
		ContentType:   req.ContentType,
		ContentLength: req.ContentLength,
		BodyReader:    req.Body.r,
		BodyBytes:     req.Body.b,
	})
	return Response{Status: w.Status, w: w}
}
