// Package wire holds the transport-neutral request and response that the
// inventory package's HTTP layer works on, shared with package adapter,
// which gives adapter authors their own documented copies. It is internal
// so that the public surface stays inventory (applications) and
// inventory/adapter (framework adapters).
package wire

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

var _ io.WriterTo = (*PiecesReader)(nil)

// Request is adapter.Request, as the HTTP layer reads it.
type Request struct {
	Method         string
	Route          int // inventory.Route
	PetID          string
	Authorization  string
	AcceptEncoding string // read for a list only
	IfNoneMatch    string // read for a list only
	CacheControl   string // read for a list only: no-cache asks for the current state
	ContentType    string
	ContentLength  int64
	BodyReader     io.Reader // a body still to be read, or nil
	BodyBytes      []byte    // a body in memory, when BodyReader is nil
	// SetReadDeadline sets the read deadline of the connection BodyReader
	// reads from (the zero time clears it); nil when it cannot be set.
	SetReadDeadline func(time.Time) error
}

// Serve answers req on api (an *inventory.API). Package inventory sets it
// at init; package adapter calls it.
var Serve func(api any, ctx context.Context, req *Request) Response

// Response is a complete answer: adapter.Response's state.
type Response struct {
	Status int
	Body   []byte   // the body in one piece, when Pieces is nil
	Pieces [][]byte // a shared body in pieces (a list), written in order; never modified

	Code            string // the error code of an error answer, for observers
	Allow           string
	WWWAuthenticate string
	RetryAfter      string
	// ETag is the list's entity tag as a shared one-element header value;
	// it is set on every list answer (200 and 304) and only there, which
	// also gives the answer the list's Cache-Control and Vary.
	ETag []string
	// ListCache is a list answer's Cache-Control when not the default
	// "private, no-cache" (inventory.WithStaleIfError adds its directive);
	// shared, never written into.
	ListCache *Header
	// Stale marks a list answered from a held state because the store
	// was unavailable: it gets Age (StaleAge in whole seconds) and
	// Cache-Status: petinventory; fwd=stale; fwd-status=503.
	Stale         bool
	StaleAge      time.Duration
	Gzip          bool     // the body is gzip-encoded (Content-Encoding: gzip)
	Buf           *[]byte  // pooled buffer that backs Body, if any
	ContentLength []string // a cached body's Content-Length value, shared; set with Head
	Head          bool     // the answer to HEAD: no body, the GET's ContentLength
}

// OmitBody makes r the answer to a HEAD request: the same status and
// headers, no body, and the Content-Length the body had. A 304 has
// neither.
func (r *Response) OmitBody() {
	if r.Status != http.StatusNotModified && r.ContentLength == nil {
		r.ContentLength = []string{strconv.Itoa(r.BodyLen())}
	}
	r.Release()
	r.Head = true
}

// The response headers, defined once. Names are in canonical form
// (textproto.CanonicalMIMEHeaderKey): the key net/http's Header map uses
// and the spelling fasthttp's lookups normalise to, so that a host's
// middleware finds and replaces them on every transport. HTTP header names
// are case-insensitive on the wire.
const (
	HeaderAllow           = "Allow"
	HeaderWWWAuthenticate = "Www-Authenticate"
	HeaderRetryAfter      = "Retry-After"
	HeaderCacheControl    = "Cache-Control"
	HeaderETag            = "Etag"
	HeaderVary            = "Vary"
	HeaderContentEncoding = "Content-Encoding"
	HeaderContentLength   = "Content-Length"
	HeaderAge             = "Age"
	HeaderCacheStatus     = "Cache-Status"
)

// FixedHeaders are the headers every response carries, with their value
// also as a shared one-element slice for net/http's Header map (len == cap
// == 1, so that a later h.Add appends to a copy and h.Set replaces it;
// nothing writes into them).
var FixedHeaders = [...]Header{
	{"Content-Type", "application/json", []string{"application/json"}},
	{"X-Content-Type-Options", "nosniff", []string{"nosniff"}},
}

// The values of the headers that depend on the answer, shared likewise.
var (
	noStore         = Header{HeaderCacheControl, "no-store", []string{"no-store"}}
	listCache       = Header{HeaderCacheControl, "private, no-cache", []string{"private, no-cache"}}
	varyEncoding    = Header{HeaderVary, "Accept-Encoding", []string{"Accept-Encoding"}}
	contentEncoding = Header{HeaderContentEncoding, "gzip", []string{"gzip"}}
	// cacheStatusStale is RFC 9211's Cache-Status of a stale list: the
	// cache petinventory forwarded the list (to its store) because what it
	// held was stale, the forward failed as a 503 would have, and it
	// answered what it held.
	cacheStatusStale = Header{HeaderCacheStatus, CacheStatusStale, []string{CacheStatusStale}}
)

// CacheStatusStale is the Cache-Status value of a list answered from a
// held state because the store was unavailable.
const CacheStatusStale = "petinventory; fwd=stale; fwd-status=503"

// ListCacheControl returns the Cache-Control header of every list answer
// under inventory.WithStaleIfError(seconds): "private, no-cache,
// stale-if-error=N".
func ListCacheControl(seconds int64) *Header {
	v := listCache.Value + ", stale-if-error=" + strconv.FormatInt(seconds, 10)
	return &Header{HeaderCacheControl, v, []string{v}}
}

// Header is one response header; Values, when not nil, is its value as a
// shared one-element slice that must not be written into.
type Header struct {
	Name, Value string
	Values      []string
}

// MaxOwnHeaders is how many headers of its own a response can carry.
const MaxOwnHeaders = 8

// OwnHeaders writes the response's own headers (Cache-Control, and those
// of Etag, Vary, Content-Encoding, Age and Cache-Status, the
// Content-Length of an answer to HEAD, Allow, WWW-Authenticate,
// Retry-After it has) into hs, and returns how many.
func (r *Response) OwnHeaders(hs *[MaxOwnHeaders]Header) (n int) {
	if r.ETag == nil {
		hs[0] = noStore
		n = 1
	} else {
		hs[0], hs[1], hs[2] = listCache, Header{HeaderETag, r.ETag[0], r.ETag}, varyEncoding
		n = 3
		if r.ListCache != nil {
			hs[0] = *r.ListCache
		}
		if r.Gzip {
			hs[n] = contentEncoding
			n++
		}
		if r.Stale {
			hs[n], hs[n+1] = Header{HeaderAge, strconv.FormatInt(int64(r.StaleAge/time.Second), 10), nil}, cacheStatusStale
			n += 2
		}
	}
	if r.Head && r.ContentLength != nil {
		hs[n] = Header{HeaderContentLength, r.ContentLength[0], r.ContentLength}
		n++
	}
	for _, h := range [...]Header{{HeaderAllow, r.Allow, nil}, {HeaderWWWAuthenticate, r.WWWAuthenticate, nil}, {HeaderRetryAfter, r.RetryAfter, nil}} {
		if h.Value != "" {
			hs[n] = h
			n++
		}
	}
	return n
}

// VisitHeaders calls set for every header of the response: the fixed ones
// first, then its own.
func (r *Response) VisitHeaders(set func(name, value string)) {
	for _, h := range FixedHeaders {
		if r.Status == http.StatusNotModified && h.Name == "Content-Type" {
			continue // a 304 has no content: RFC 9110 15.4.5
		}
		set(h.Name, h.Value)
	}
	var own [MaxOwnHeaders]Header
	for _, h := range own[:r.OwnHeaders(&own)] {
		set(h.Name, h.Value)
	}
}

// BodyLen is the length of the body, in one piece or in Pieces.
func (r *Response) BodyLen() int {
	if r.Pieces == nil {
		return len(r.Body)
	}
	n := 0
	for _, p := range r.Pieces {
		n += len(p)
	}
	return n
}

// WriteBody writes the body to w, piece by piece, without copying it:
// one Write call for a body in one piece, none for no body.
func (r *Response) WriteBody(w io.Writer) (int64, error) {
	if r.Pieces == nil || len(r.Pieces) == 1 {
		b := r.Body
		if r.Pieces != nil {
			b = r.Pieces[0]
		}
		if len(b) == 0 {
			return 0, nil
		}
		n, err := w.Write(b)
		return int64(n), err
	}
	pr := PiecesReader{pieces: r.Pieces}
	return pr.WriteTo(w)
}

// NewPiecesReader returns a reader of pieces, in order.
func NewPiecesReader(pieces [][]byte) *PiecesReader { return &PiecesReader{pieces: pieces} }

// PiecesReader reads a body in pieces. Its WriteTo writes each piece
// straight to the writer, so io.Copy (and fasthttp's body streaming) copy
// nothing through a buffer of their own. It is not net.Buffers because
// net.Buffers consumes what it reads by writing into its slice (nil-ing
// the pieces read), and the pieces are shared by every list in flight.
type PiecesReader struct {
	pieces [][]byte
	off    int // read offset in pieces[0]
}

// Read implements io.Reader.
func (p *PiecesReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) && len(p.pieces) > 0 {
		c := copy(b[n:], p.pieces[0][p.off:])
		n += c
		p.off += c
		if p.off == len(p.pieces[0]) {
			p.pieces, p.off = p.pieces[1:], 0
		}
	}
	if n == 0 && len(p.pieces) == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo implements io.WriterTo.
func (p *PiecesReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(p.pieces) > 0 {
		n, err := w.Write(p.pieces[0][p.off:])
		total += int64(n)
		p.off += n
		if err != nil {
			return total, err
		}
		p.pieces, p.off = p.pieces[1:], 0
	}
	return total, nil
}

// Release returns the body's buffer to the pool.
func (r *Response) Release() {
	if r.Buf != nil {
		*r.Buf = r.Body[:0]
		bufPool.Put(r.Buf)
		r.Buf = nil
	}
	r.Body = nil
	r.Pieces = nil
}

// SetBody makes body, built in buf, the response's body; buf goes back to
// the pool on Release unless body outgrew what the pool keeps.
func (r *Response) SetBody(buf *[]byte, body []byte) {
	r.Body = body
	if cap(body) <= MaxPooledBuf {
		*buf = body
		r.Buf = buf
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// MaxPooledBuf keeps one huge list from pinning its buffer in the pool.
const MaxPooledBuf = 64 << 10

// GetBuf returns a pooled buffer; PutBuf gives back one not used as a body.
func GetBuf() *[]byte { return bufPool.Get().(*[]byte) }

// PutBuf returns buf to the pool.
func PutBuf(buf *[]byte) { bufPool.Put(buf) }
