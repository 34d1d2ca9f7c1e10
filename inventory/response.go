package inventory

import (
	"strconv"
	"unicode/utf8"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// errorResponse builds the Error body of e.
func errorResponse(e *Error) wire.Response {
	buf := wire.GetBuf()
	b := append((*buf)[:0], `{"code":`...)
	b = appendJSONString(b, string(e.code))
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.message)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status()), 10)
	b = append(b, '}')
	r := wire.Response{Status: e.Status(), Code: string(e.code)}
	r.SetBody(buf, b)
	if e.code == CodeUnavailable {
		r.RetryAfter = retryAfterSeconds
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
