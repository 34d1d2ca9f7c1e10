package redisstore

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// TestGzipAndConditionalListAcrossStores: on Redis, the gzip list decodes
// to exactly the identity list, the ETag of a state is the same on two API
// instances (two processes in production), and a conditional list with
// the old tag after an update through the other instance is 200 with the
// update, never 304.
func TestGzipAndConditionalListAcrossStores(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		a := newTestStore(t, c)
		b, err := New(c, WithKeyPrefix(a.KeyPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		items := make([]inventory.Item, 400)
		for i := range items {
			items[i] = inventory.Item{PetID: int64(i + 1), Quantity: i, Status: inventory.StatusAvailable}
		}
		if err := a.Put(t.Context(), items...); err != nil {
			t.Fatal(err)
		}
		const key = "k"
		apiA, _ := inventory.New(a, inventory.WithAPIKeys(key))
		apiB, _ := inventory.New(b, inventory.WithAPIKeys(key))
		do := func(h http.Handler, method, path, body string, headers ...string) *httptest.ResponseRecorder {
			t.Helper()
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w
		}
		identity := do(apiA, "GET", "/inventory", "")
		gz := do(apiA, "GET", "/inventory", "", "Accept-Encoding", "gzip")
		if identity.Code != 200 || gz.Code != 200 || gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Content-Length") != strconv.Itoa(gz.Body.Len()) {
			t.Fatalf("lists: %d, %d %v", identity.Code, gz.Code, gz.Header())
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, identity.Body.Bytes()) {
			t.Fatalf("the gzip list decodes to %d bytes (%v); want the %d of the identity list", len(plain), err, identity.Body.Len())
		}
		tag := identity.Header().Get("ETag")
		if other := do(apiB, "GET", "/inventory", ""); other.Header().Get("ETag") != tag {
			t.Errorf("one state, two instances: ETag %s and %s", tag, other.Header().Get("ETag"))
		}
		if w := do(apiB, "GET", "/inventory", "", "If-None-Match", tag); w.Code != 304 || w.Body.Len() != 0 {
			t.Errorf("If-None-Match with the current tag on the other instance: %d, %d bytes; want 304", w.Code, w.Body.Len())
		}
		if w := do(apiB, "PATCH", "/inventory/9", `{"quantity":4321}`); w.Code != 200 {
			t.Fatalf("update: %d %s", w.Code, w.Body)
		}
		w := do(apiA, "GET", "/inventory", "", "If-None-Match", tag)
		if w.Code != 200 || w.Header().Get("ETag") == tag || !strings.Contains(w.Body.String(), `{"petId":9,"quantity":4321,`) {
			t.Errorf("conditional list with the old tag after an update through the other instance: %d, ETag %s (old %s)", w.Code, w.Header().Get("ETag"), tag)
		}
	})
}
