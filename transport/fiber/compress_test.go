package inventoryfiber_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/compress"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// Behind Fiber's compress middleware (which skips an answer that already
// has a Content-Encoding), the gzip list is the API's own, compressed
// once; small lists, errors and 304s are compressed at most once.
func TestCompressMiddleware(t *testing.T) {
	for _, n := range []int{3000, 10} { // a gzip list, and one under GzipMinBytes
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
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Use(compress.New(compress.Config{Level: compress.LevelBestSpeed}))
		if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		addr := serveApp(t, app)
		url := "http://" + addr + "/v1/inventory"
		get := func(h http.Header) (*http.Response, []byte) {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header = h
			if req.Header.Get("Authorization") == "" {
				req.Header.Set("Authorization", "Bearer k")
			}
			resp, err := http.DefaultTransport.RoundTrip(req) // nothing decoded for us
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
		_, identity := get(http.Header{"Accept-Encoding": {"identity"}})
		if !bytes.HasPrefix(identity, []byte("[{")) {
			t.Fatalf("%d pets: identity list %q…", n, identity[:min(len(identity), 8)])
		}
		resp, body := get(http.Header{"Accept-Encoding": {"gzip"}})
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%d pets: gzip list %v: %v", n, resp.Header, err)
		}
		if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, identity) {
			t.Fatalf("%d pets: the gzip list decodes (once) to %d bytes, %v; want the identity list", n, len(plain), err)
		}
		tag := resp.Header.Get("ETag")
		if own := strings.HasSuffix(tag, `-gzip"`); own != (n == 3000) || (own && resp.ContentLength != int64(len(body))) {
			t.Errorf("%d pets: gzip list ETag %s, Content-Length %d for %d bytes; want the API's own gzip exactly when the list is large enough", n, tag, resp.ContentLength, len(body))
		}
		if resp, body := get(http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {tag}}); resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("%d pets: conditional list: %d, %d bytes; want 304", n, resp.StatusCode, len(body))
		}
		if resp, body := get(http.Header{"Accept-Encoding": {"gzip"}, "Authorization": {"Bearer wrong"}}); resp.StatusCode != 401 || (resp.Header.Get("Content-Encoding") == "" && !bytes.HasPrefix(body, []byte(`{"code":"unauthorized"`))) {
			t.Errorf("%d pets: 401 through the middleware: %v %q", n, resp.Header, body)
		}
	}
}
