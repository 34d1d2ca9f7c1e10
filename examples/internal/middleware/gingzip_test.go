package middleware

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	gingzip "github.com/gin-contrib/gzip"
	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

// server serves the API of n pets under /v1 on Gin behind gin-contrib/gzip
// with opts.
func server(t *testing.T, n int, opts ...gingzip.Option) *httptest.Server {
	t.Helper()
	items := make([]inventory.Item, n)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i + 1), Quantity: i % 50, Status: inventory.StatusSold}
	}
	store, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"))
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gingzip.Gzip(gingzip.DefaultCompression, opts...))
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	return benchfix.Get(t, url, h)
}

// decodeOnce decodes a gzip body once; what comes out must be JSON, not
// gzip again.
func decodeOnce(t *testing.T, what string, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not gzip: %v", what, err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: the gzip body does not decode: %v", what, err)
	}
	if len(plain) < 2 || plain[0] != '[' {
		t.Fatalf("%s: decodes to %q…, not the JSON list (compressed twice?)", what, plain[:min(len(plain), 8)])
	}
	return plain
}

// check lists through the middleware: identity, gzip asked explicitly and
// through Go's client, conditionally, and an error; ownGzip says whether
// the gzip list must be the API's own precompressed one (its tag ends in
// -gzip) rather than the middleware's.
func check(t *testing.T, srv *httptest.Server, ownGzip bool) {
	t.Helper()
	url := srv.URL + "/v1/inventory"
	plainResp, identity := get(t, url, http.Header{"Accept-Encoding": {"identity"}})
	if plainResp.StatusCode != 200 || plainResp.Header.Get("Content-Encoding") != "" || identity[0] != '[' {
		t.Fatalf("identity list: %d %v", plainResp.StatusCode, plainResp.Header)
	}
	resp, gz := get(t, url, http.Header{"Accept-Encoding": {"gzip"}})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip list: %d %v", resp.StatusCode, resp.Header)
	}
	if !bytes.Equal(decodeOnce(t, "gzip list", gz), identity) {
		t.Fatal("the gzip list does not decode to the identity list")
	}
	tag := resp.Header.Get("ETag")
	if isOwn := len(tag) > 6 && tag[len(tag)-6:] == `-gzip"`; isOwn != ownGzip {
		t.Errorf("gzip list ETag %q: the API's own gzip: %v; want %v", tag, isOwn, ownGzip)
	}
	if ownGzip && resp.Header.Get("Content-Length") == "" {
		t.Error("the API's gzip list has no Content-Length")
	}
	if resp, body := get(t, url, http.Header{}); !resp.Uncompressed || !bytes.Equal(body, identity) {
		t.Errorf("Go's client: decoded %v, %d bytes; want the identity list", resp.Uncompressed, len(body))
	}
	if resp, body := get(t, url, http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {tag}}); resp.StatusCode != 304 || len(body) != 0 {
		t.Errorf("conditional gzip list: %d, %d bytes; want 304", resp.StatusCode, len(body))
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer wrong")
	errResp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(errResp.Body)
	errResp.Body.Close()
	if errResp.StatusCode != 401 || !bytes.HasPrefix(body, []byte(`{"code":"unauthorized"`)) {
		t.Errorf("401 through the middleware: %v %q", errResp.Header, body)
	}
}

// With its defaults, gin-contrib/gzip claims Content-Encoding before the
// API runs: the API then answers identity, and the middleware compresses
// it once.
func TestGinGzipDefaults(t *testing.T) {
	check(t, server(t, 3000), false)
}

// With the list excluded from the middleware, as the README says, the
// answer is the API's precompressed gzip list.
func TestGinGzipExcludingTheList(t *testing.T) {
	check(t, server(t, 3000, gingzip.WithExcludedPaths([]string{"/v1/inventory"})), true)
}
