package inventory

import (
	"strconv"
	"sync"
	"unicode/utf8"
)

// Response is a complete answer to one request, for an adapter to copy out:
// set every header VisitHeaders names, write Status, write Body. Call
// Release once the body has been copied or written, so its buffer can be
// reused; forgetting it only costs garbage. Body must not be modified: it
// may be shared with other responses (the cached list).
type Response struct {
	Status int
	Body   []byte

	code            Code // the error code of an error answer, for observers
	allow           string
	wwwAuthenticate string
	retryAfter      string
	buf             *[]byte  // pooled buffer that backs Body, if any
	contentLength   []string // a cached body's Content-Length value, shared
}

// The response headers, defined once. Names are in canonical form
// (textproto.CanonicalMIMEHeaderKey): the key net/http's Header map uses
// and the spelling fasthttp's lookups normalise to, so that a host's
// middleware finds and replaces them on every transport. HTTP header names
// are case-insensitive on the wire.
const (
	headerAllow           = "Allow"
	headerWWWAuthenticate = "Www-Authenticate"
	headerRetryAfter      = "Retry-After"
)

// fixedHeaders are the headers every response carries, with their value
// also as a shared one-element slice for net/http's Header map (len == cap
// == 1, so that a later h.Add appends to a copy and h.Set replaces it;
// nothing writes into them).
var fixedHeaders = [...]struct {
	name, value string
	values      []string
}{
	{"Content-Type", "application/json", []string{"application/json"}},
	{"Cache-Control", "no-store", []string{"no-store"}},
	{"X-Content-Type-Options", "nosniff", []string{"nosniff"}},
}

// header is one response header.
type header struct{ name, value string }

// maxHeaders is how many headers a Response can carry.
const maxHeaders = len(fixedHeaders) + 3

// headers lists the response's headers without allocating: the fixed
// ones first, then those of this response.
func (r *Response) headers() (hs [maxHeaders]header, n int) {
	for i, h := range fixedHeaders {
		hs[i] = header{h.name, h.value}
	}
	n = len(fixedHeaders)
	n += r.ownHeaders(hs[n:])
	return hs, n
}

// ownHeaders writes this response's own headers (Allow,
// WWW-Authenticate, Retry-After: those it has) into hs, and returns how
// many.
func (r *Response) ownHeaders(hs []header) (n int) {
	for _, h := range [...]header{{headerAllow, r.allow}, {headerWWWAuthenticate, r.wwwAuthenticate}, {headerRetryAfter, r.retryAfter}} {
		if h.value != "" {
			hs[n] = h
			n++
		}
	}
	return n
}

// VisitHeaders calls set for every header of the response, the ones every
// response carries (Content-Type, Cache-Control, X-Content-Type-Options)
// and those of this one (Allow, WWW-Authenticate, Retry-After). Names come
// in canonical form (textproto.CanonicalMIMEHeaderKey, "Www-Authenticate"),
// the form both net/http and fasthttp store and look up.
func (r *Response) VisitHeaders(set func(name, value string)) {
	hs, n := r.headers()
	for _, h := range hs[:n] {
		set(h.name, h.value)
	}
}

// Stable reports whether Body stays valid and unchanged after Release (a
// cached list, or a body not from the pool), so that an adapter may hand it
// to its framework without copying it.
func (r *Response) Stable() bool { return r.buf == nil }

// Release returns the body's buffer to the pool. The Response must not be
// used afterwards.
func (r *Response) Release() {
	if r.buf != nil {
		*r.buf = r.Body[:0]
		bufPool.Put(r.buf)
		r.buf = nil
	}
	r.Body = nil
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledBuf keeps one huge list from pinning its buffer in the pool.
const maxPooledBuf = 64 << 10

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func (r *Response) setBody(buf *[]byte, body []byte) {
	r.Body = body
	if cap(body) <= maxPooledBuf {
		*buf = body
		r.buf = buf
	}
}

// errorResponse builds the Error body of e.
func errorResponse(e *Error) Response {
	buf := getBuf()
	b := append((*buf)[:0], `{"code":`...)
	b = appendJSONString(b, string(e.Code))
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status()), 10)
	b = append(b, '}')
	r := Response{Status: e.Status(), code: e.Code}
	r.setBody(buf, b)
	if e.Code == CodeUnavailable {
		r.retryAfter = retryAfterSeconds
	}
	return r
}

// retryAfterSeconds is what 503 answers ask a client to wait: long enough
// for a Redis failover to be noticed, short enough not to matter.
const retryAfterSeconds = "1"

// appendJSONString appends s as a JSON string, escaping what RFC 8259
// requires and replacing invalid UTF-8 with U+FFFD so the output is always
// valid JSON.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
