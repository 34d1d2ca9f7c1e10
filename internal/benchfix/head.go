package benchfix

import (
	"bufio"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Head checks HEAD over a raw socket against an API with key "k" whose list
// is large enough to be sent gzip (LargeList's): listURL is its list
// route, itemURL an item route. For each of identity and gzip, HEAD gets
// the GET's status and headers (Content-Length and Content-Encoding
// included) and no byte of body; HEAD with the GET's ETag in If-None-Match
// is 304; HEAD without a key is the GET's 401 without its body; HEAD on
// the item route is 405 with Allow: PATCH; a 405 on the list route names
// HEAD in Allow. Raw, because Go's client discards whatever a server sends
// after the header of an answer to HEAD.
func Head(t *testing.T, listURL, itemURL string) {
	t.Helper()
	for _, enc := range []string{"identity", "gzip"} {
		h := http.Header{"Authorization": {"Bearer k"}, "Accept-Encoding": {enc}}
		get, body := rawDo(t, http.MethodGet, listURL, h)
		head, rest := rawDo(t, http.MethodHead, listURL, h)
		if get.StatusCode != http.StatusOK || head.StatusCode != http.StatusOK || len(rest) != 0 {
			t.Fatalf("%s: GET %d, HEAD %d with %d bytes after its header; want 200, 200 and none", enc, get.StatusCode, head.StatusCode, len(rest))
		}
		sameHeaders(t, enc, get.Header, head.Header)
		if want := enc == "gzip"; (get.Header.Get("Content-Encoding") == "gzip") != want {
			t.Errorf("%s: Content-Encoding %q", enc, get.Header.Get("Content-Encoding"))
		}
		if cl := head.Header.Get("Content-Length"); cl == "" || cl != get.Header.Get("Content-Length") || len(body) == 0 {
			t.Errorf("%s: HEAD Content-Length %q, GET's %q for %d bytes", enc, cl, get.Header.Get("Content-Length"), len(body))
		}
		h.Set("If-None-Match", get.Header.Get("ETag"))
		nm, rest := rawDo(t, http.MethodHead, listURL, h)
		if nm.StatusCode != http.StatusNotModified || len(rest) != 0 || nm.Header.Get("ETag") != get.Header.Get("ETag") {
			t.Errorf("%s: conditional HEAD: %d ETag %q (%d bytes); want 304 with the GET's ETag, no body", enc, nm.StatusCode, nm.Header.Get("ETag"), len(rest))
		}
	}
	// Authentication comes before the list, as for GET.
	get, _ := rawDo(t, http.MethodGet, listURL, http.Header{"If-None-Match": {"*"}})
	head, rest := rawDo(t, http.MethodHead, listURL, http.Header{"If-None-Match": {"*"}})
	if get.StatusCode != http.StatusUnauthorized || head.StatusCode != http.StatusUnauthorized || len(rest) != 0 {
		t.Errorf("HEAD without a key: %d (%d bytes of body); want the GET's %d, no body", head.StatusCode, len(rest), get.StatusCode)
	}
	sameHeaders(t, "401", get.Header, head.Header)
	for _, c := range []struct{ method, url, allow string }{
		{http.MethodHead, itemURL, "PATCH"},
		{http.MethodPut, listURL, "GET, HEAD"},
	} {
		resp, _ := rawDo(t, c.method, c.url, http.Header{"Authorization": {"Bearer k"}})
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q; want 405 Allow %q", c.method, c.url, resp.StatusCode, resp.Header.Get("Allow"), c.allow)
		}
	}
}

// sameHeaders fails t unless HEAD's headers are the GET's, but Date.
func sameHeaders(t *testing.T, what string, get, head http.Header) {
	t.Helper()
	for _, h := range []http.Header{get, head} {
		h.Del("Date")
	}
	for k, v := range get {
		if strings.Join(head[k], ",") != strings.Join(v, ",") {
			t.Errorf("%s: HEAD %s: %q; GET's %q", what, k, head[k], v)
		}
	}
	for k := range head {
		if _, ok := get[k]; !ok {
			t.Errorf("%s: HEAD has %s, GET has not", what, k)
		}
	}
}

// rawDo sends one request on a connection of its own, with Connection:
// close, and returns the answer's header and every byte the server sent
// after it (for a HEAD or a 304, which have no body, that must be none).
func rawDo(t *testing.T, method, rawURL string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, u.Host, 0)
	defer conn.Close()
	var b strings.Builder
	b.WriteString(method + " " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\n")
	for k, vs := range h {
		for _, v := range vs {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	write(t, conn, b.String())
	br := bufio.NewReader(conn)
	// ReadResponse for GET reads the header only; the body stays on br.
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("%s %s: reading to the end: %v", method, rawURL, err)
	}
	if method == http.MethodGet && resp.Header.Get("Transfer-Encoding") == "" && resp.ContentLength >= 0 && int64(len(rest)) != resp.ContentLength {
		t.Errorf("GET %s: %d bytes of body; Content-Length %d", rawURL, len(rest), resp.ContentLength)
	}
	return resp, rest
}
