package checks

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcMalformed = "SECURITY.md (keys never appear in logs, error messages or responses); RFC 9112 §2.2, §5"

// Malformed are the checks of request heads that no HTTP parser accepts,
// with the valid key in them, sent over a socket of their own: the
// answer is often the framework's or the HTTP server's own, before any
// handler runs (fasthttp once answered such a head with a 400 whose body
// quoted the whole raw head, Authorization included), and it must not
// repeat the key.
var Malformed = []*suite.Check{
	{
		Name:   "security/malformed-head-no-echo",
		Source: srcMalformed,
		Rule: "A request head that cannot be parsed (a control byte or NUL in a header value, the Authorization value included, " +
			"an invalid header name, a bad request line) and carries the valid key gets an answer (any status, or none) that does not hold the key.",
		Run: run(securityMalformedHeadNoEcho),
	},
}

// securityMalformedHeadNoEcho judges security/malformed-head-no-echo.
func securityMalformedHeadNoEcho(c checker) {
	key := c.Settings().APIKey
	if len(key) < wire.MinEchoKey {
		c.Skipf("the API key is shorter than %d bytes: it would be found by chance in ordinary answers", wire.MinEchoKey)
	}
	u, err := url.Parse(c.Settings().BaseURL)
	if err != nil {
		c.Skipf("base URL: %v", err)
	}
	path := u.EscapedPath() + "/inventory"
	for _, m := range malformedHeads {
		head := m.head(path, u.Host, "Authorization: Bearer "+key) + "\r\n"
		answer, err := c.rawExchange(u, head)
		if err != nil && len(answer) == 0 {
			continue // no answer at all: nothing repeated
		}
		if bytes.Contains(answer, []byte(key)) || bytes.Contains(answer, []byte(strconv.Quote(key))) {
			c.Failf(nil, "an answer without the key (a plain 400 Bad Request, or the connection closed)",
				"GET /inventory with %s in its head, sent over a socket: the answer repeats the API key (%d bytes): %q",
				m.what, len(answer), firstBytes(answer, 300))
		}
	}
}

// malformedHead is one unparsable request head.
type malformedHead struct {
	what string
	head func(path, host, auth string) string
}

var malformedHeads = []malformedHead{
	{"a control byte in a header value", func(p, h, a string) string {
		return "GET " + p + " HTTP/1.1\r\nHost: " + h + "\r\n" + a + "\r\nX-Probe: a\x01b\r\n"
	}},
	{"a NUL in a header value", func(p, h, a string) string {
		return "GET " + p + " HTTP/1.1\r\nHost: " + h + "\r\n" + a + "\r\nX-Probe: a\x00b\r\n"
	}},
	{"a control byte in the Authorization value", func(p, h, a string) string {
		return "GET " + p + " HTTP/1.1\r\nHost: " + h + "\r\n" + a + "\x01\r\n"
	}},
	{"an invalid header name", func(p, h, a string) string {
		return "GET " + p + " HTTP/1.1\r\nHost: " + h + "\r\n" + a + "\r\nX Pro(be): x\r\n"
	}},
	{"a bad request line", func(p, h, a string) string {
		return "GET " + p + " HTTP/1.1 extra\r\nHost: " + h + "\r\n" + a + "\r\n"
	}},
	{"a bad HTTP version", func(p, h, a string) string {
		return "GET " + p + " HTTP/x.y\r\nHost: " + h + "\r\n" + a + "\r\n"
	}},
}

// rawExchange writes head on a connection of its own to u's host (TLS for
// https, with the run's client's TLS settings when it has them) and
// returns what comes back until the server closes, 64 KiB, or the request
// timeout.
func (c checker) rawExchange(u *url.URL, head string) ([]byte, error) {
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	timeout := c.Settings().RequestTimeout
	d := &net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(c.Ctx(), "tcp", host)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if u.Scheme == "https" {
		cfg := &tls.Config{ServerName: u.Hostname()}
		if t, ok := c.Settings().HTTPClient.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName = u.Hostname()
			}
		}
		tc := tls.Client(conn, cfg)
		conn = tc
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(conn, 64<<10))
}

// firstBytes is b cut to n bytes.
func firstBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
