package inventory_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// bigStore holds n pets: a list body of about 47 bytes each.
func bigStore(t *testing.T, n int) *memstore.Store {
	t.Helper()
	items := make([]inventory.Item, n)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i + 1), Quantity: i % 17, Status: inventory.StatusAvailable}
	}
	s, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func listReq(acceptEncoding, ifNoneMatch string) adapter.Request {
	return adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, AcceptEncoding: acceptEncoding, IfNoneMatch: ifNoneMatch}
}

func decodeGzip(t *testing.T, body string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the gzip list does not decode: %v", err)
	}
	return string(b)
}

// checkListHeaders checks what every list answer carries.
func checkListHeaders(t *testing.T, what string, h map[string]string) {
	t.Helper()
	if h["Cache-Control"] != "private, no-cache" || h["Vary"] != "Accept-Encoding" || !strings.HasPrefix(h["Etag"], `"`) || !strings.HasSuffix(h["Etag"], `"`) {
		t.Errorf("%s: headers %v; want Cache-Control private, no-cache, Vary Accept-Encoding and a strong ETag", what, h)
	}
}

// TestListNegotiation: a list is gzip exactly when gzip is acceptable and
// the body large enough, decodes to the identity body, and has its own
// tag; errors and updates stay identity and no-store.
func TestListNegotiation(t *testing.T) {
	api := newAPI(t, bigStore(t, 500))
	status, h, identity := serve(api, listReq("", ""))
	if status != 200 || h["Content-Encoding"] != "" || len(identity) < inventory.GzipMinBytes {
		t.Fatalf("identity list: %d %v, %d bytes", status, h, len(identity))
	}
	checkListHeaders(t, "identity list", h)
	status, hz, gz := serve(api, listReq("gzip, deflate", ""))
	if status != 200 || hz["Content-Encoding"] != "gzip" {
		t.Fatalf("gzip list: %d %v", status, hz)
	}
	checkListHeaders(t, "gzip list", hz)
	if decodeGzip(t, gz) != identity || 6*len(gz) > len(identity) {
		t.Errorf("the gzip list (%d bytes) does not decode to the identity list (%d bytes), or is not 6 times smaller", len(gz), len(identity))
	}
	if hz["Etag"] == h["Etag"] || hz["Etag"] != strings.TrimSuffix(h["Etag"], `"`)+`-gzip"` {
		t.Errorf("ETag identity %s, gzip %s; want the gzip one to be the identity one with -gzip", h["Etag"], hz["Etag"])
	}
	for _, ae := range []string{"gzip;q=0", "br", "identity", "*;q=0"} {
		if _, h, body := serve(api, listReq(ae, "")); h["Content-Encoding"] != "" || body != identity {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes; want the identity list", ae, h["Content-Encoding"], len(body))
		}
	}
	// Small bodies stay identity: a small list, an update, an error.
	small := newAPI(t, newStore(t))
	if _, h, _ := serve(small, listReq("gzip", "")); h["Content-Encoding"] != "" {
		t.Errorf("a list under GzipMinBytes: Content-Encoding %q", h["Content-Encoding"])
	}
	checks := map[string]adapter.Request{
		"update": patch("1", `{"quantity":4}`),
		"error":  {Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Bearer wrong", AcceptEncoding: "gzip"},
		"405":    {Method: http.MethodDelete, Route: inventory.RouteList, AcceptEncoding: "gzip"},
	}
	for name, req := range checks {
		req.AcceptEncoding = "gzip"
		if _, h, _ := serve(api, req); h["Content-Encoding"] != "" || h["Cache-Control"] != "no-store" || h["Etag"] != "" || h["Vary"] != "" {
			t.Errorf("%s: headers %v; want identity, no-store, no ETag, no Vary", name, h)
		}
	}
}

// TestConditionalList: 304 with the list's headers and no body for a
// matching tag or *, 200 otherwise, and never 304 for a state older than
// an update made through another API on the same store.
func TestConditionalList(t *testing.T) {
	store := bigStore(t, 300)
	a, b := newAPI(t, store), newAPI(t, store) // two processes on one store
	_, h, identity := serve(a, listReq("", ""))
	_, hz, _ := serve(a, listReq("gzip", ""))
	tag, gzTag := h["Etag"], hz["Etag"]
	if _, hb, _ := serve(b, listReq("", "")); hb["Etag"] != tag {
		t.Errorf("two APIs on one state: tags %s and %s", tag, hb["Etag"])
	}
	for _, c := range []struct {
		ae, inm string
		status  int
	}{
		{"", tag, 304},
		{"", "W/" + tag, 304},
		{"", `"other", ` + tag, 304},
		{"", "*", 304},
		{"gzip", "*", 304},
		{"gzip", gzTag, 304},
		{"gzip", tag, 200}, // the identity tag does not validate the gzip list
		{"", gzTag, 200},
		{"", `"other"`, 200},
	} {
		status, h, body := serve(a, listReq(c.ae, c.inm))
		checkListHeaders(t, "conditional list", h)
		wantTag := tag
		if c.ae == "gzip" {
			wantTag = gzTag
		}
		if status != c.status || h["Etag"] != wantTag {
			t.Errorf("Accept-Encoding %q, If-None-Match %s: %d ETag %s; want %d ETag %s", c.ae, c.inm, status, h["Etag"], c.status, wantTag)
		}
		if status == 304 && (body != "" || h["Content-Encoding"] != "" || h["Content-Type"] != "") {
			t.Errorf("304 with body %q, headers %v", body, h)
		}
		if status == 200 && c.ae == "" && body != identity {
			t.Errorf("200 to If-None-Match %s: not the list", c.inm)
		}
	}
	// An update through b, answered before the conditional list on a
	// begins: a must not answer 304 to the old tag.
	if status, _, _ := serve(b, patch("7", `{"quantity":999}`)); status != 200 {
		t.Fatal(status)
	}
	status, h2, body := serve(a, listReq("", tag))
	if status != 200 || h2["Etag"] == tag || !strings.Contains(body, `{"petId":7,"quantity":999,`) {
		t.Errorf("after an update through another API: %d ETag %s (old %s); want 200 with the update and a new tag", status, h2["Etag"], tag)
	}
	if status, _, _ := serve(a, listReq("", h2["Etag"])); status != 304 {
		t.Errorf("the new tag: %d; want 304", status)
	}
	// Unauthenticated: 401 before any conditional answer.
	req := listReq("", "*")
	req.Authorization = "-"
	if status, h, _ := serve(a, req); status != 401 || h["Etag"] != "" {
		t.Errorf("If-None-Match * without a key: %d %v; want 401 without ETag", status, h)
	}
}

// TestListOverHTTP: over net/http, Go's client decodes the gzip list
// transparently, and conditional requests get 304 without a body.
func TestListOverHTTP(t *testing.T) {
	api := newAPI(t, bigStore(t, 2000)) // a body of pieces, not joined
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	get := func(h http.Header) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/inventory", nil)
		req.Header = h
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	plain, identity := get(http.Header{"Accept-Encoding": {"identity"}})
	if plain.StatusCode != 200 || plain.Header.Get("Content-Encoding") != "" || plain.ContentLength != int64(len(identity)) {
		t.Fatalf("identity list: %d %v", plain.StatusCode, plain.Header)
	}
	auto, body := get(http.Header{}) // the transport asks for gzip and decodes it
	if !auto.Uncompressed || !bytes.Equal(body, identity) {
		t.Errorf("Go's client: uncompressed %v, %d bytes; want the identity list decoded from gzip", auto.Uncompressed, len(body))
	}
	raw, gz := get(http.Header{"Accept-Encoding": {"gzip"}}) // asked for explicitly: not decoded
	if raw.Header.Get("Content-Encoding") != "gzip" || raw.Header.Get("Content-Length") != strconv.Itoa(len(gz)) || decodeGzip(t, string(gz)) != string(identity) {
		t.Errorf("gzip list: %v, %d bytes", raw.Header, len(gz))
	}
	nm, b := get(http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {raw.Header.Get("ETag")}})
	if nm.StatusCode != 304 || len(b) != 0 || nm.Header.Get("ETag") != raw.Header.Get("ETag") || nm.Header.Get("Vary") != "Accept-Encoding" || nm.Header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("conditional gzip list: %d %v, %d bytes", nm.StatusCode, nm.Header, len(b))
	}
	// A header sent on several lines is one list (RFC 9110 section 5.3):
	// the tag on the second line matches, the gzip on the second is taken.
	split, b := get(http.Header{"Accept-Encoding": {"br", "gzip"}, "If-None-Match": {`"other"`, raw.Header.Get("ETag")}})
	if split.StatusCode != 304 || len(b) != 0 {
		t.Errorf("If-None-Match and Accept-Encoding on two lines each: %d %v; want 304", split.StatusCode, split.Header)
	}
	split, b = get(http.Header{"Accept-Encoding": {"br", "gzip"}})
	if split.Header.Get("Content-Encoding") != "gzip" || decodeGzip(t, string(b)) != string(identity) {
		t.Errorf("Accept-Encoding on two lines, br then gzip: %v; want the gzip list", split.Header)
	}
}

// The adapters' large-list check, on net/http.
func TestLargeListOverSocket(t *testing.T) {
	api, check := benchfix.LargeList(t)
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	check(srv.URL + "/v1/inventory")
}

// HEAD on the list is GET without the body, on every way to mount the API
// on net/http; HEAD on the item route is 405.
func TestHeadOverSocket(t *testing.T) {
	api, _ := benchfix.LargeList(t)
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		t.Fatal(err)
	}
	mw, err := api.Middleware("/v1")
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{
		"StripPrefix": http.StripPrefix("/v1", api),
		"Register":    mux,
		"Middleware":  mw(http.NotFoundHandler()),
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			benchfix.Head(t, srv.URL+"/v1/inventory", srv.URL+"/v1/inventory/1")
		})
	}
}

// An update body that stalls is answered 408 request_timeout once the
// body timeout passes, on every way to mount the API on net/http.
func TestStalledBodyOverSocket(t *testing.T) {
	api := benchfix.StallAPI(t)
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{"StripPrefix": http.StripPrefix("/v1", api), "Register": mux} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(h)
			defer srv.Close()
			benchfix.StalledBody(t, srv.URL+"/v1/inventory/1", benchfix.StallTimeout)
		})
	}
}

// A client sending an update body far past the limit reads its 413 on
// net/http, also when it asked to close the connection (net/http itself
// reads none of the unread body then, and the kernel would reset the
// connection under the answer).
func TestLargeBodyAlwaysReadsItsAnswer(t *testing.T) {
	srv := httptest.NewServer(http.StripPrefix("/v1", newAPI(t, bigStore(t, 1))))
	defer srv.Close()
	benchfix.RefusedLargeBodies(t, srv.URL, testKey, 50)
}

// A host's middleware that has set Content-Encoding before the API runs
// encodes the answer itself: the API answers the identity list, so that
// nothing is encoded twice.
func TestClaimedContentEncodingGetsIdentity(t *testing.T) {
	api := newAPI(t, bigStore(t, 500))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br") // what a compressing middleware does first
		http.StripPrefix("/v1", api).ServeHTTP(w, r)
	})
	req := httptest.NewRequest("GET", "/v1/inventory", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Accept-Encoding", "gzip, br")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 || w.Header().Get("Content-Encoding") != "br" || !strings.HasPrefix(w.Body.String(), "[{") || strings.HasSuffix(w.Header().Get("ETag"), `-gzip"`) {
		t.Errorf("list under a claimed Content-Encoding: %d %v %q…; want the identity list", w.Code, w.Header(), w.Body.String()[:min(w.Body.Len(), 8)])
	}
}
