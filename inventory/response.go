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

	allow           string
	wwwAuthenticate string
	retryAfter      string
	buf             *[]byte  // pooled buffer that backs Body, if any
	contentLength   []string // a cached body's Content-Length value, shared
}

// header is one response header.
type header struct{ name, value string }

// maxHeaders is how many headers a Response can carry.
const maxHeaders = 6

// headers lists the response's headers without allocating: the three every
// response carries, first (WriteResponse relies on that order), then those
// of this one.
func (r *Response) headers() (hs [maxHeaders]header, n int) {
	hs[0] = header{"Content-Type", "application/json"}
	hs[1] = header{"Cache-Control", "no-store"}
	hs[2] = header{"X-Content-Type-Options", "nosniff"}
	n = 3
	for _, h := range [...]header{{"Allow", r.allow}, {"WWW-Authenticate", r.wwwAuthenticate}, {"Retry-After", r.retryAfter}} {
		if h.value != "" {
			hs[n] = h
			n++
		}
	}
	return hs, n
}

// VisitHeaders calls set for every header of the response, the ones every
// response carries (Content-Type, Cache-Control, X-Content-Type-Options)
// and those of this one (Allow, WWW-Authenticate, Retry-After).
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
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, '}')
	r := Response{Status: e.Status}
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
