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
// has a Content-Encoding), nothing is compressed twice. Set up as the
// README says, skipping the inventory, every gzip list is the API's own
// with its -gzip tag; without that, a small list the API leaves identity
// is compressed by the middleware under the identity list's tag.
func TestCompressMiddleware(t *testing.T) {
	readme := func(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/v1/inventory") }
	for _, tc := range []struct {
		n    int
		next func(*fiber.Ctx) bool
	}{{3000, readme}, {10, readme}, {3000, nil}, {10, nil}} { // a gzip list, and one under GzipMinBytes
		n := tc.n
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
		app.Use(compress.New(compress.Config{Level: compress.LevelBestSpeed, Next: tc.next}))
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
		tag := resp.Header.Get("ETag")
		if resp.Header.Get("Content-Encoding") == "" {
			if n == 3000 || tc.next == nil || !bytes.Equal(body, identity) {
				t.Fatalf("%d pets, skipped %v: identity list (%v) to Accept-Encoding: gzip", n, tc.next != nil, resp.Header)
			}
		} else {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%d pets: gzip list %v: %v", n, resp.Header, err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, identity) {
				t.Fatalf("%d pets: the gzip list decodes (once) to %d bytes, %v; want the identity list", n, len(plain), err)
			}
			if own := strings.HasSuffix(tag, `-gzip"`); own != (n == 3000) || (own && resp.ContentLength != int64(len(body))) {
				t.Errorf("%d pets: gzip list ETag %s, Content-Length %d for %d bytes; want the API's own gzip exactly when the list is large enough", n, tag, resp.ContentLength, len(body))
			}
		}
		if resp, body := get(http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {tag}}); resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("%d pets: conditional list: %d, %d bytes; want 304", n, resp.StatusCode, len(body))
		}
		// Headers sent on several lines are one list (RFC 9110 section 5.3).
		if resp, body := get(http.Header{"Accept-Encoding": {"br", "gzip"}, "If-None-Match": {`"other"`, tag}}); resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("%d pets: Accept-Encoding and If-None-Match on two lines each, the tag on the second: %d, %d bytes; want 304", n, resp.StatusCode, len(body))
		}
		if resp, _ := get(http.Header{"Accept-Encoding": {"br", "gzip"}}); n == 3000 && resp.Header.Get("ETag") != tag {
			t.Errorf("%d pets: Accept-Encoding br, then gzip on a second line: ETag %s; want the gzip list's %s", n, resp.Header.Get("ETag"), tag)
		}
		if resp, body := get(http.Header{"Accept-Encoding": {"gzip"}, "Authorization": {"Bearer wrong"}}); resp.StatusCode != 401 || (resp.Header.Get("Content-Encoding") == "" && !bytes.HasPrefix(body, []byte(`{"code":"unauthorized"`))) {
			t.Errorf("%d pets: 401 through the middleware: %v %q", n, resp.Header, body)
		}
	}
}
