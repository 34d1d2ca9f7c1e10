package wire

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Response is an answer, raw (the key not yet removed): the checks look
// at it; only its scrubbed record (Client.Record) is ever shown.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Truncated is set when the body was longer than MaxResponseBytes,
	// of which Body holds the first.
	Truncated bool
}

// Exchange is one request and its answer.
type Exchange struct {
	Req  Request
	URL  string
	Resp *Response // nil when Err is set
	Err  error
}

// MaxResponseBytes bounds what is read of an answer: a list of a million
// pets fits. A variable so that a test can lower it.
var MaxResponseBytes = 64 << 20

// ContentEncoding returns the answer's Content-Encoding, lower case, ""
// for none or identity.
func (r *Response) ContentEncoding() string {
	ce := strings.ToLower(strings.TrimSpace(strings.Join(r.Header.Values("Content-Encoding"), ",")))
	if ce == "identity" {
		return ""
	}
	return ce
}

// IdentityBody returns the body with its content coding removed: the
// body itself when it has none, the decoded bytes of a gzip body, an
// error for a coding the suite never asks for or a gzip body that does
// not decode.
func (r *Response) IdentityBody() ([]byte, error) {
	switch ce := r.ContentEncoding(); ce {
	case "":
		return r.Body, nil
	case "gzip", "x-gzip":
		b, err := Gunzip(r.Body)
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("the body says Content-Encoding: %s and does not decode: %v", ce, err)
		}
		return b, nil
	default:
		return nil, fmt.Errorf("Content-Encoding: %s, a coding the request did not accept", ce)
	}
}

// ErrTooLarge is Gunzip's error for a body that decodes to more than
// the suite reads of an answer: no fault of the server.
var ErrTooLarge = errors.New("it decodes to more bytes than the suite reads of an answer")

// Gunzip decodes exactly one gzip member, with nothing after it.
func Gunzip(b []byte) ([]byte, error) {
	br := bytes.NewReader(b) // a ByteReader: the decoder reads no further than the member
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	out, err := io.ReadAll(io.LimitReader(zr, int64(MaxResponseBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > MaxResponseBytes {
		return nil, ErrTooLarge
	}
	if br.Len() != 0 {
		return nil, fmt.Errorf("%d bytes after the gzip stream", br.Len())
	}
	return out, nil
}

// RetryPause is the shortest wait before a request answered 503, or not
// at all, is sent again: the wait when the answer gives no Retry-After.
const RetryPause = 250 * time.Millisecond

// RetryWait is how long to wait before sending again a request whose
// answer was ex (503, or none): its Retry-After, at least RetryPause, at
// most left (what remains of the time the caller may wait).
func RetryWait(ex *Exchange, left time.Duration) time.Duration {
	return min(max(RetryAfter(ex, RetryPause), RetryPause), left)
}

// RetryAfter is how long the answer of ex asks to wait before trying
// again (Retry-After in seconds, RFC 9110 §10.2.3), or fallback when it
// says nothing readable (no answer, no header, a date).
func RetryAfter(ex *Exchange, fallback time.Duration) time.Duration {
	if ex.Err != nil || ex.Resp == nil {
		return fallback
	}
	s, err := strconv.Atoi(strings.TrimSpace(ex.Resp.Header.Get("Retry-After")))
	if err != nil || s < 0 {
		return fallback
	}
	return time.Duration(s) * time.Second
}
