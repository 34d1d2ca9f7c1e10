package inventorygin_test

// The benchmarks measure what the library costs a Gin host: each one runs
// the inventory API mounted with Register ("lib") beside the least a Gin
// handler can do for the same work ("bare"), in the same run, through the
// same entry point (engine.ServeHTTP with one reusable ResponseWriter, no
// sockets), so that lib/bare is the ratio to read:
//
//	go test -run '^$' -bench . -benchmem -count 3
//
// The bare handlers do the work the contract asks for and nothing more:
// check the bearer header (a plain comparison), then for a list write
// bytes encoded once in advance, and for an update parse the petId, decode
// {"quantity":n} with encoding/json, set a map entry under a mutex and
// encode the item with encoding/json. Both sides set the same response
// headers (Content-Type, Cache-Control, X-Content-Type-Options,
// Content-Length), and setup checks that both answer 200 with the same
// bytes, so neither side can be measuring an error path.
//
// A third side, "bare+sha256", is the bare handler with a constant-time
// key check instead of the plain comparison: the SHA-256 digest of the
// presented key compared in constant time with the configured key's (about
// 100 ns), the textbook way, which the library used at first. It shows
// what such a check costs; the bare handler skips it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

func benchEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	return gin.New()
}

func benchLibEngine(b *testing.B, items []inventory.Item) *gin.Engine {
	b.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(benchfix.Key))
	if err != nil {
		b.Fatal(err)
	}
	engine := benchEngine()
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		b.Fatal(err)
	}
	return engine
}

// benchSetHeaders sets the headers every inventory response carries.
func benchSetHeaders(c *gin.Context, contentLength string) {
	c.Header("Cache-Control", "no-store")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Length", contentLength)
}

// benchBareEngine returns the bare handlers; withSHA256 swaps the plain
// comparison of the Authorization header for benchfix.SHA256Authorized.
func benchBareEngine(items []inventory.Item, withSHA256 bool) *gin.Engine {
	list, err := json.Marshal(items)
	if err != nil {
		panic(err)
	}
	listLength := strconv.Itoa(len(list))
	var mu sync.Mutex
	byID := make(map[int64]inventory.Item, len(items))
	for _, it := range items {
		byID[it.PetID] = it
	}

	engine := benchEngine()
	v1 := engine.Group("/v1")
	v1.GET("/inventory", func(c *gin.Context) {
		if withSHA256 {
			if !benchfix.SHA256Authorized(c.Request.Header.Get("Authorization")) {
				c.Status(http.StatusUnauthorized)
				return
			}
		} else if c.Request.Header.Get("Authorization") != benchfix.Bearer {
			c.Status(http.StatusUnauthorized)
			return
		}
		benchSetHeaders(c, listLength)
		c.Data(http.StatusOK, "application/json", list)
	})
	v1.PATCH("/inventory/:petId", func(c *gin.Context) {
		if withSHA256 {
			if !benchfix.SHA256Authorized(c.Request.Header.Get("Authorization")) {
				c.Status(http.StatusUnauthorized)
				return
			}
		} else if c.Request.Header.Get("Authorization") != benchfix.Bearer {
			c.Status(http.StatusUnauthorized)
			return
		}
		id, err := strconv.ParseInt(c.Param("petId"), 10, 64)
		if err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		var in struct {
			Quantity int `json:"quantity"`
		}
		if err := json.NewDecoder(c.Request.Body).Decode(&in); err != nil || in.Quantity < 0 {
			c.Status(http.StatusBadRequest)
			return
		}
		mu.Lock()
		it, ok := byID[id]
		if ok {
			it.Quantity = in.Quantity
			byID[id] = it
		}
		mu.Unlock()
		if !ok {
			c.Status(http.StatusNotFound)
			return
		}
		out, err := json.Marshal(it)
		if err != nil {
			c.Status(http.StatusInternalServerError)
			return
		}
		benchSetHeaders(c, strconv.Itoa(len(out)))
		c.Data(http.StatusOK, "application/json", out)
	})
	return engine
}

// benchCheck fails b unless w holds a 200 with exactly want and the
// contract's headers.
func benchCheck(b *testing.B, side, what string, w *benchfix.Writer, want []byte) {
	b.Helper()
	if w.Status != http.StatusOK {
		b.Fatalf("%s %s: status %d, body %s", side, what, w.Status, w.Body)
	}
	if !bytes.Equal(w.Body, want) {
		b.Fatalf("%s %s: body\n%.200s\nwant\n%.200s", side, what, w.Body, want)
	}
	for name, value := range map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         strconv.Itoa(len(want)),
	} {
		if got := w.Header().Get(name); got != value {
			b.Fatalf("%s %s: %s is %q, want %q", side, what, name, got, value)
		}
	}
}

type benchSide struct {
	name   string
	engine func(*testing.B, []inventory.Item) *gin.Engine
}

var benchSides = []benchSide{
	{"lib", benchLibEngine},
	{"bare", func(_ *testing.B, items []inventory.Item) *gin.Engine { return benchBareEngine(items, false) }},
	{"bare+sha256", func(_ *testing.B, items []inventory.Item) *gin.Engine { return benchBareEngine(items, true) }},
}

func BenchmarkList(b *testing.B) {
	for _, side := range benchSides {
		for _, n := range benchfix.ListSizes {
			b.Run(fmt.Sprintf("%s/items=%d", side.name, n), func(b *testing.B) {
				items := benchfix.Items(n)
				want, err := json.Marshal(items)
				if err != nil {
					b.Fatal(err)
				}
				engine := side.engine(b, items)
				req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
				req.Header.Set("Authorization", benchfix.Bearer)
				w := benchfix.NewWriter()
				engine.ServeHTTP(w, req)
				benchCheck(b, side.name, "list", w, want)

				b.ReportAllocs()
				for b.Loop() {
					w.Reset()
					engine.ServeHTTP(w, req)
					if w.Status != http.StatusOK {
						b.Fatalf("status %d", w.Status)
					}
				}
			})
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, side := range benchSides {
		b.Run(side.name, func(b *testing.B) {
			items := benchfix.Items(100)
			engine := side.engine(b, items)
			// One request per pet, reused; bodies set a different quantity
			// each time.
			reqs := make([]*http.Request, benchfix.UpdatePets)
			readers := make([]*benchfix.Body, benchfix.UpdatePets)
			for i := range reqs {
				readers[i] = &benchfix.Body{}
				reqs[i] = httptest.NewRequest(http.MethodPatch, "/v1/inventory/"+strconv.Itoa(i*11+1), nil)
				reqs[i].Header.Set("Authorization", benchfix.Bearer)
				reqs[i].Header.Set("Content-Type", "application/json")
				reqs[i].Body = readers[i]
			}
			bodies := make([][]byte, benchfix.Bodies)
			for i := range bodies {
				bodies[i] = []byte(`{"quantity":` + strconv.Itoa(i*7919%100000) + `}`)
			}
			send := func(w *benchfix.Writer, i int) {
				p := i % benchfix.UpdatePets
				body := bodies[i%benchfix.Bodies]
				readers[p].Reset(body)
				reqs[p].ContentLength = int64(len(body))
				w.Reset()
				engine.ServeHTTP(w, reqs[p])
			}

			w := benchfix.NewWriter()
			for i := range benchfix.UpdatePets + 1 {
				send(w, i)
				want := items[(i%benchfix.UpdatePets)*11]
				want.Quantity = i * 7919 % 100000
				wantBody, _ := json.Marshal(want)
				benchCheck(b, side.name, "update", w, wantBody)
			}

			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				send(w, i)
				if w.Status != http.StatusOK {
					b.Fatalf("status %d: %s", w.Status, w.Body)
				}
			}
		})
	}
}
