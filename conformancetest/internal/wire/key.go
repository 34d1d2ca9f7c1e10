package wire

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// KeyVar is what the output shows instead of the API key.
const KeyVar = report.KeyVar

// MinEchoKey is the length below which a key is not looked for in
// answers (Echoes), nor hidden in free text (Client.Scrub): it would be
// found there by chance.
const MinEchoKey = 8

// maxShownBody is how much of a body a record shows.
const maxShownBody = 2048

// Scrub replaces every occurrence of the key with $INVENTORY_API_KEY. A
// key shorter than MinEchoKey is replaced only where it is known to stand
// (ScrubAuthorization): in free text it stands by chance ("k" in every
// word with a k), and replacing it there would garble the report.
func (cl *Client) Scrub(s string) string {
	if len(cl.APIKey) < MinEchoKey {
		return s
	}
	return strings.ReplaceAll(s, cl.APIKey, KeyVar)
}

// ScrubAuthorization hides the key in an Authorization value the suite
// sent: everywhere, as Scrub does, or for a short key where it is the
// credentials after the scheme.
func (cl *Client) ScrubAuthorization(v string) string {
	if len(cl.APIKey) >= MinEchoKey {
		return cl.Scrub(v)
	}
	if i := strings.LastIndexAny(v, " \t"); i >= 0 && cl.APIKey != "" && v[i+1:] == cl.APIKey {
		return v[:i+1] + KeyVar
	}
	return v
}

// Echoes reports whether the answer holds secret, in a header or the
// body. A secret shorter than MinEchoKey is not looked for: it would be
// found by chance in ordinary bodies.
func Echoes(resp *Response, secret string) bool {
	if len(secret) < MinEchoKey || resp == nil {
		return false
	}
	if bytes.Contains(resp.Body, []byte(secret)) {
		return true
	}
	for _, vs := range resp.Header {
		for _, v := range vs {
			if strings.Contains(v, secret) {
				return true
			}
		}
	}
	return false
}

// Record returns the exchange as it may be shown: key replaced, long
// bodies cut.
func (cl *Client) Record(ex *Exchange) *report.Exchange {
	rec := &report.Exchange{Request: report.RequestRecord{
		Method:   ex.Req.Method,
		URL:      ex.URL,
		Header:   map[string]string{},
		Body:     cl.Scrub(ShowBody(ex.Req.Body)),
		BodySize: len(ex.Req.Body),
		Chunked:  ex.Req.Chunked,
	}}
	switch a := ex.Req.Auth; {
	case a == nil:
		rec.Request.Header["Authorization"] = "Bearer " + KeyVar
	case a.Send:
		rec.Request.Header["Authorization"] = cl.ScrubAuthorization(a.Value)
	}
	if ex.Req.ContentType != "" {
		rec.Request.Header["Content-Type"] = ex.Req.ContentType
	}
	rec.Request.Header["Accept-Encoding"] = ex.Req.AcceptedEncoding()
	if ex.Req.IfNoneMatch != "" {
		rec.Request.Header["If-None-Match"] = ex.Req.IfNoneMatch
	}
	if ex.Req.NoCache {
		rec.Request.Header["Cache-Control"] = NoCacheDirective
	}
	if ex.Err != nil {
		rec.Error = cl.Scrub(ex.Err.Error())
		return rec
	}
	rr := &report.ResponseRecord{Status: ex.Resp.Status, Header: map[string]string{}, BodySize: len(ex.Resp.Body)}
	for name, vs := range ex.Resp.Header {
		rr.Header[name] = cl.Scrub(strings.Join(vs, ", "))
	}
	rr.Body = cl.Scrub(ShowBody(ex.Resp.Body))
	rec.Response = rr
	return rec
}

// ShowBody makes a body printable: invalid UTF-8 as \xNN, long bodies cut
// with their size said.
func ShowBody(b []byte) string {
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

// Curl returns a shell command that sends the same request as ex, the
// key read from $INVENTORY_API_KEY (see report.Curl).
func (cl *Client) Curl(ex *Exchange) string {
	r := ex.Req
	cr := report.CurlRequest{Method: r.Method, URL: ex.URL, ContentType: r.ContentType, AcceptEncoding: r.AcceptEncoding,
		IfNoneMatch: r.IfNoneMatch, Body: r.Body, Chunked: r.Chunked}
	if r.NoCache {
		cr.CacheControl = NoCacheDirective
	}
	if r.Auth != nil {
		cr.Auth = &report.CurlAuth{Send: r.Auth.Send, Value: r.Auth.Value}
	}
	return report.Curl(cr, cl.APIKey)
}
