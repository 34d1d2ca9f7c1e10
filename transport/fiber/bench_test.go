package inventoryfiber_test

// The benchmarks measure what the library costs a Fiber host: each one
// runs the inventory API mounted with Register ("lib") beside the least a
// Fiber handler can do for the same work ("bare"), in the same run,
// through the same entry point (the fasthttp.RequestHandler of app.Handler
// called with a prepared *fasthttp.RequestCtx, no sockets), so that
// lib/bare is the ratio to read:
//
//	go test -run '^$' -bench . -benchmem -count 3
//
// The bare handlers do the work the contract asks for and nothing more:
// check the bearer header (a plain comparison), then for a list send bytes
// encoded once in advance, and for an update parse the petId, decode
// {"quantity":n} with encoding/json, set a map entry under a mutex and
// encode the item with encoding/json. Both sides set the same response
// headers (Content-Type, Cache-Control, X-Content-Type-Options; fasthttp
// adds Content-Length when it writes the response), and setup checks that
// both answer 200 with the same bytes, so neither side can be measuring an
// error path.
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
	"strconv"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	"github.com/valyala/fasthttp"
)

func benchApp() *fiber.App {
	return fiber.New(fiber.Config{DisableStartupMessage: true})
}

func benchLibHandler(b *testing.B, items []inventory.Item) fasthttp.RequestHandler {
	b.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(benchfix.Key))
	if err != nil {
		b.Fatal(err)
	}
	app := benchApp()
	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
		b.Fatal(err)
	}
	return app.Handler()
}

// benchSetHeaders sets the headers every inventory response carries.
func benchSetHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentType, "application/json")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
}

func benchBareHandler(_ *testing.B, items []inventory.Item) fasthttp.RequestHandler {
	return benchBareApp(items, false)
}

func benchBareSHA256Handler(_ *testing.B, items []inventory.Item) fasthttp.RequestHandler {
	return benchBareApp(items, true)
}

// benchBareApp returns the bare handlers; withSHA256 swaps the plain
// comparison of the Authorization header for benchfix.SHA256Authorized.
func benchBareApp(items []inventory.Item, withSHA256 bool) fasthttp.RequestHandler {
	inv := benchfix.NewBareInventory(items)

	app := benchApp()
	v1 := app.Group("/v1")
	v1.Get("/inventory", func(c *fiber.Ctx) error {
		if !benchfix.Authorized(c.Get(fiber.HeaderAuthorization), withSHA256) {
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		benchSetHeaders(c)
		c.Set(fiber.HeaderCacheControl, benchfix.ListCacheControl)
		c.Set(fiber.HeaderETag, benchfix.BareETag)
		c.Set(fiber.HeaderVary, "Accept-Encoding")
		return c.Send(inv.List)
	})
	v1.Patch("/inventory/:petId", func(c *fiber.Ctx) error {
		if !benchfix.Authorized(c.Get(fiber.HeaderAuthorization), withSHA256) {
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		id, err := strconv.ParseInt(c.Params("petId"), 10, 64)
		if err != nil {
			return c.SendStatus(fiber.StatusBadRequest)
		}
		var in struct {
			Quantity int `json:"quantity"`
		}
		if err := json.Unmarshal(c.Body(), &in); err != nil || in.Quantity < 0 {
			return c.SendStatus(fiber.StatusBadRequest)
		}
		it, ok := inv.Set(id, in.Quantity)
		if !ok {
			return c.SendStatus(fiber.StatusNotFound)
		}
		out, err := json.Marshal(it)
		if err != nil {
			return c.SendStatus(fiber.StatusInternalServerError)
		}
		benchSetHeaders(c)
		return c.Send(out)
	})
	return app.Handler()
}

// benchCheck fails b unless ctx holds a 200 with exactly want and the
// contract's headers.
func benchCheck(b *testing.B, side, what string, ctx *fasthttp.RequestCtx, want []byte) {
	b.Helper()
	resp := &ctx.Response
	if resp.StatusCode() != http.StatusOK {
		b.Fatalf("%s %s: status %d, body %s", side, what, resp.StatusCode(), resp.Body())
	}
	if !bytes.Equal(resp.Body(), want) {
		b.Fatalf("%s %s: body\n%.200s\nwant\n%.200s", side, what, resp.Body(), want)
	}
	headers := map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	}
	if what == "list" {
		headers["Cache-Control"], headers["Vary"] = benchfix.ListCacheControl, "Accept-Encoding"
		if len(resp.Header.Peek(fiber.HeaderETag)) != len(benchfix.BareETag) {
			b.Fatalf("%s %s: ETag %q, want one as long as %s", side, what, resp.Header.Peek(fiber.HeaderETag), benchfix.BareETag)
		}
	}
	for name, value := range headers {
		if got := string(resp.Header.Peek(name)); got != value {
			b.Fatalf("%s %s: %s is %q, want %q", side, what, name, got, value)
		}
	}
}

type benchSide struct {
	name    string
	handler func(*testing.B, []inventory.Item) fasthttp.RequestHandler
}

var benchSides = []benchSide{
	{"lib", benchLibHandler},
	{"bare", benchBareHandler},
	{"bare+sha256", benchBareSHA256Handler},
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
				h := side.handler(b, items)
				ctx := &fasthttp.RequestCtx{}
				ctx.Request.Header.SetMethod(fiber.MethodGet)
				ctx.Request.SetRequestURI("/v1/inventory")
				ctx.Request.Header.Set(fiber.HeaderAuthorization, benchfix.Bearer)
				h(ctx)
				benchCheck(b, side.name, "list", ctx, want)

				b.ReportAllocs()
				for b.Loop() {
					ctx.Response.Reset()
					h(ctx)
					if ctx.Response.StatusCode() != http.StatusOK {
						b.Fatalf("status %d", ctx.Response.StatusCode())
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
			h := side.handler(b, items)
			// One request context per pet, reused; bodies set a different
			// quantity each time.
			ctxs := make([]*fasthttp.RequestCtx, benchfix.UpdatePets)
			for i := range ctxs {
				ctx := &fasthttp.RequestCtx{}
				ctx.Request.Header.SetMethod(fiber.MethodPatch)
				ctx.Request.SetRequestURI("/v1/inventory/" + strconv.Itoa(i*11+1))
				ctx.Request.Header.Set(fiber.HeaderAuthorization, benchfix.Bearer)
				ctx.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
				ctxs[i] = ctx
			}
			bodies := make([][]byte, benchfix.Bodies)
			for i := range bodies {
				bodies[i] = []byte(`{"quantity":` + strconv.Itoa(i*7919%100000) + `}`)
			}
			send := func(i int) *fasthttp.RequestCtx {
				ctx := ctxs[i%benchfix.UpdatePets]
				ctx.Request.SetBody(bodies[i%benchfix.Bodies])
				ctx.Response.Reset()
				h(ctx)
				return ctx
			}

			for i := range benchfix.UpdatePets + 1 {
				ctx := send(i)
				want := items[(i%benchfix.UpdatePets)*11]
				want.Quantity = i * 7919 % 100000
				wantBody, _ := json.Marshal(want)
				benchCheck(b, side.name, "update", ctx, wantBody)
			}

			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if ctx := send(i); ctx.Response.StatusCode() != http.StatusOK {
					b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
		})
	}
}
