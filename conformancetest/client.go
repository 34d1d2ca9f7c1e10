package conformancetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// keyVar is what the output shows instead of the API key.
const keyVar = report.KeyVar

// request is one request a check sends. Paths are relative to the base URL
// ("/inventory", "/inventory/12?x=1").
type request struct {
	method string
	path   string
	// auth is the Authorization header; nil sends "Bearer <key>".
	auth *authHeader
	// contentType is sent when not empty.
	contentType string
	body        []byte
	// chunked sends the body without Content-Length.
	chunked bool
	// acceptEncoding is the Accept-Encoding header; empty sends
	// "identity", so that every answer is seen as the server sent it
	// (no transparent decoding by the client).
	acceptEncoding string
	// ifNoneMatch is sent as If-None-Match when not empty.
	ifNoneMatch string
	// noCache sends Cache-Control: no-cache, which a deployment with a
	// staleness bound answers from its store as it is, never from a
	// state it holds (CONTRACT.md §With a staleness bound): the strict
	// list. Without it a list is the default one, as a client sends it,
	// which such a deployment may answer up to its bound old.
	noCache bool
	// base, when not empty, is the base URL to send to instead of
	// Config.BaseURL: one of Config.Replicas.
	base string
	// gate, when not nil, holds the body back until the gate opens: the
	// connection is open and the headers are sent, so that requests
	// released together reach the server together.
	gate *gate
}

// gate releases the bodies of several requests at once.
type gate struct {
	ready   chan struct{} // receives once per request whose headers are out
	release chan struct{} // closed to let every body go
}

func newGate(n int) *gate {
	return &gate{ready: make(chan struct{}, n), release: make(chan struct{})}
}

// gatedBody is a request body that reports its first read (the transport
// reads the body only after it has flushed the headers of a request with
// a length and a body of unknown type) and then waits for the gate. A
// retry on another connection (GetBody) reads a new one that waits too
// and reports nothing more: ready counts requests, once each.
type gatedBody struct {
	ctx    context.Context
	g      *gate
	once   *sync.Once
	r      *bytes.Reader
	waited bool
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.waited {
		b.waited = true
		b.once.Do(func() { b.g.ready <- struct{}{} })
		select {
		case <-b.g.release:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	return b.r.Read(p)
}

// stateList is the list the suite learns and verifies state with: the
// strict list (noCache), so that a deployment with a staleness bound
// shows every update answered before it, as every other deployment
// does. The checks that look at the default list, the one clients get,
// send a request without noCache and say so.
func stateList() request {
	return request{method: http.MethodGet, path: "/inventory", noCache: true}
}

// defaultAcceptEncoding is what a request accepts when it does not say.
const defaultAcceptEncoding = "identity"

func (r request) acceptedEncoding() string {
	if r.acceptEncoding == "" {
		return defaultAcceptEncoding
	}
	return r.acceptEncoding
}

// authHeader is an Authorization header to send, or none.
type authHeader struct {
	send  bool
	value string
}

var noAuth = &authHeader{}

func withAuth(v string) *authHeader { return &authHeader{send: true, value: v} }

// response is an answer, raw (the key not yet removed): the checks look
// at it; only its scrubbed record is ever shown.
type response struct {
	status int
	header http.Header
	body   []byte
	// truncated is set when the body was longer than maxResponseBytes,
	// of which body holds the first.
	truncated bool
}

// contentEncoding returns the answer's Content-Encoding, lower case, ""
// for none or identity.
func (r *response) contentEncoding() string {
	ce := strings.ToLower(strings.TrimSpace(strings.Join(r.header.Values("Content-Encoding"), ",")))
	if ce == "identity" {
		return ""
	}
	return ce
}

// identityBody returns the body with its content coding removed: the
// body itself when it has none, the decoded bytes of a gzip body, an
// error for a coding the suite never asks for or a gzip body that does
// not decode.
func (r *response) identityBody() ([]byte, error) {
	switch ce := r.contentEncoding(); ce {
	case "":
		return r.body, nil
	case "gzip", "x-gzip":
		b, err := gunzip(r.body)
		if errors.Is(err, errTooLarge) {
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

// errTooLarge is gunzip's error for a body that decodes to more than
// the suite reads of an answer: no fault of the server.
var errTooLarge = errors.New("it decodes to more bytes than the suite reads of an answer")

// gunzip decodes exactly one gzip member, with nothing after it.
func gunzip(b []byte) ([]byte, error) {
	br := bytes.NewReader(b) // a ByteReader: the decoder reads no further than the member
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	out, err := io.ReadAll(io.LimitReader(zr, int64(maxResponseBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxResponseBytes {
		return nil, errTooLarge
	}
	if br.Len() != 0 {
		return nil, fmt.Errorf("%d bytes after the gzip stream", br.Len())
	}
	return out, nil
}

// exchange is one request and its answer.
type exchange struct {
	req  request
	url  string
	resp *response // nil when err is set
	err  error
}

// maxResponseBytes bounds what is read of an answer: a list of a million
// pets fits. A variable so that a test can lower it.
var maxResponseBytes = 64 << 20

// send performs r. It never fails the check itself: a transport error is
// returned in the exchange.
func (rn *runner) send(ctx context.Context, r request) *exchange {
	base := rn.cfg.BaseURL
	if r.base != "" {
		base = r.base
	}
	ex := &exchange{req: r, url: base + r.path}
	ctx, cancel := context.WithTimeout(ctx, rn.cfg.RequestTimeout)
	defer cancel()
	req, err := rn.newRequest(ctx, r, ex.url)
	if err != nil {
		ex.err = err
		return ex
	}
	resp, err := rn.cfg.HTTPClient.Do(req)
	if err != nil {
		ex.err = err
		return ex
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxResponseBytes)+1))
	if err != nil {
		ex.err = fmt.Errorf("reading the response body: %w", err)
		return ex
	}
	truncated := len(b) > maxResponseBytes
	if truncated {
		b = b[:maxResponseBytes]
	}
	ex.resp = &response{status: resp.StatusCode, header: resp.Header, body: b, truncated: truncated}
	return ex
}

// newRequest builds the HTTP request of r, headers included.
func (rn *runner) newRequest(ctx context.Context, r request, url string) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		if r.gate != nil {
			body = &gatedBody{ctx: ctx, g: r.gate, once: new(sync.Once), r: bytes.NewReader(r.body)}
		} else if r.chunked {
			body = onlyReader{bytes.NewReader(r.body)}
		} else {
			body = bytes.NewReader(r.body)
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, url, body)
	if err != nil {
		return nil, err
	}
	if r.chunked {
		req.ContentLength = -1
		req.GetBody = nil
	}
	if gb, ok := body.(*gatedBody); ok {
		req.ContentLength = int64(len(r.body))
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(&gatedBody{ctx: ctx, g: gb.g, once: gb.once, r: bytes.NewReader(r.body)}), nil
		}
	}
	switch {
	case r.auth == nil:
		req.Header.Set("Authorization", "Bearer "+rn.cfg.APIKey)
	case r.auth.send:
		req.Header.Set("Authorization", r.auth.value)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	// Set explicitly, so that net/http neither adds gzip nor decodes the
	// answer: the checks see the raw bytes and headers.
	req.Header.Set("Accept-Encoding", r.acceptedEncoding())
	if r.ifNoneMatch != "" {
		req.Header.Set("If-None-Match", r.ifNoneMatch)
	}
	if r.noCache {
		req.Header.Set("Cache-Control", noCacheDirective)
	}
	return req, nil
}

// noCacheDirective is the Cache-Control of a strict list (RFC 9111
// §5.2.1.4).
const noCacheDirective = "no-cache"

// onlyReader hides the type of a reader so that net/http cannot learn its
// length: the request goes out chunked.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// scrub replaces every occurrence of the key with $INVENTORY_API_KEY. A
// key shorter than minEchoKey is replaced only where it is known to stand
// (scrubAuthorization): in free text it stands by chance ("k" in every
// word with a k), and replacing it there would garble the report.
func (rn *runner) scrub(s string) string {
	if len(rn.cfg.APIKey) < minEchoKey {
		return s
	}
	return strings.ReplaceAll(s, rn.cfg.APIKey, keyVar)
}

// scrubAuthorization hides the key in an Authorization value the suite
// sent: everywhere, as scrub does, or for a short key where it is the
// credentials after the scheme.
func (rn *runner) scrubAuthorization(v string) string {
	if len(rn.cfg.APIKey) >= minEchoKey {
		return rn.scrub(v)
	}
	if i := strings.LastIndexAny(v, " \t"); i >= 0 && rn.cfg.APIKey != "" && v[i+1:] == rn.cfg.APIKey {
		return v[:i+1] + keyVar
	}
	return v
}

// echoes reports whether the answer holds the API key, in a header or the
// body. A key shorter than minEchoKey is not looked for: it would be found
// by chance in ordinary bodies.
func (rn *runner) echoes(resp *response, secret string) bool {
	if len(secret) < minEchoKey || resp == nil {
		return false
	}
	if bytes.Contains(resp.body, []byte(secret)) {
		return true
	}
	for _, vs := range resp.header {
		for _, v := range vs {
			if strings.Contains(v, secret) {
				return true
			}
		}
	}
	return false
}

const minEchoKey = 8

// maxShownBody is how much of a body a record shows.
const maxShownBody = 2048

// record returns the exchange as it may be shown: key replaced, long
// bodies cut.
func (rn *runner) record(ex *exchange) *Exchange {
	rec := &Exchange{Request: RequestRecord{
		Method:   ex.req.method,
		URL:      ex.url,
		Header:   map[string]string{},
		Body:     rn.scrub(showBody(ex.req.body)),
		BodySize: len(ex.req.body),
		Chunked:  ex.req.chunked,
	}}
	switch a := ex.req.auth; {
	case a == nil:
		rec.Request.Header["Authorization"] = "Bearer " + keyVar
	case a.send:
		rec.Request.Header["Authorization"] = rn.scrubAuthorization(a.value)
	}
	if ex.req.contentType != "" {
		rec.Request.Header["Content-Type"] = ex.req.contentType
	}
	rec.Request.Header["Accept-Encoding"] = ex.req.acceptedEncoding()
	if ex.req.ifNoneMatch != "" {
		rec.Request.Header["If-None-Match"] = ex.req.ifNoneMatch
	}
	if ex.req.noCache {
		rec.Request.Header["Cache-Control"] = noCacheDirective
	}
	if ex.err != nil {
		rec.Error = rn.scrub(ex.err.Error())
		return rec
	}
	rr := &ResponseRecord{Status: ex.resp.status, Header: map[string]string{}, BodySize: len(ex.resp.body)}
	for name, vs := range ex.resp.header {
		rr.Header[name] = rn.scrub(strings.Join(vs, ", "))
	}
	rr.Body = rn.scrub(showBody(ex.resp.body))
	rec.Response = rr
	return rec
}

// showBody makes a body printable: invalid UTF-8 as \xNN, long bodies cut
// with their size said.
func showBody(b []byte) string {
	cut := b
	if len(cut) > maxShownBody {
		cut = cut[:maxShownBody]
	}
	var sb strings.Builder
	for len(cut) > 0 {
		r, size := utf8.DecodeRune(cut)
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&sb, `\x%02x`, cut[0])
			cut = cut[1:]
			continue
		}
		sb.Write(cut[:size])
		cut = cut[size:]
	}
	if len(b) > maxShownBody {
		fmt.Fprintf(&sb, "… (%d bytes in all)", len(b))
	}
	return sb.String()
}

// curl returns a shell command that sends the same request as ex, the
// key read from $INVENTORY_API_KEY (see report.Curl).
func (rn *runner) curl(ex *exchange) string {
	r := ex.req
	cr := report.CurlRequest{Method: r.method, URL: ex.url, ContentType: r.contentType, AcceptEncoding: r.acceptEncoding,
		IfNoneMatch: r.ifNoneMatch, Body: r.body, Chunked: r.chunked}
	if r.noCache {
		cr.CacheControl = noCacheDirective
	}
	if r.auth != nil {
		cr.Auth = &report.CurlAuth{Send: r.auth.send, Value: r.auth.value}
	}
	return report.Curl(cr, rn.cfg.APIKey)
}
