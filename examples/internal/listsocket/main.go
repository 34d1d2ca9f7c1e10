// Command listsocket is a measuring tool of scripts/bench/list-socket.sh:
// the in-memory list over a real socket, embedded as docs/EMBEDDING.md shows
// (-side lib), or the bare framework writing the same bytes with the same
// headers after a plain bearer check (-side bare), on Gin, Fiber or
// net/http. "lib req/s ÷ bare req/s" is the fraction the library keeps.
// It is not an example to copy.
//
//	INVENTORY_API_KEYS=KEY listsocket -framework gin -side lib -addr 127.0.0.1:18101 -items 100
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

func main() {
	framework := flag.String("framework", "gin", "gin, fiber or nethttp")
	side := flag.String("side", "lib", "lib (the API) or bare (the framework writing the same bytes)")
	addr := flag.String("addr", "127.0.0.1:18101", "listen address")
	items := flag.Int("items", 100, "pets in the inventory")
	flag.Parse()
	if err := run(*framework, *side, *addr, *items); err != nil {
		fmt.Fprintln(os.Stderr, "listsocket:", err)
		os.Exit(1)
	}
}

func run(framework, side, addr string, n int) error {
	if !slices.Contains([]string{"gin", "fiber", "nethttp"}, framework) || side != "lib" && side != "bare" {
		return fmt.Errorf("-framework %q -side %q: want gin, fiber or nethttp and lib or bare", framework, side)
	}
	key, _, _ := strings.Cut(os.Getenv("INVENTORY_API_KEYS"), ",")
	if key == "" {
		return errors.New("INVENTORY_API_KEYS is not set")
	}
	items := benchfix.Items(n)
	store, err := memstore.New(items...)
	if err != nil {
		return err
	}
	var api *inventory.API // nil on the bare side
	if side == "lib" {
		if api, err = inventory.New(store, inventory.WithAPIKeys(key)); err != nil {
			return err
		}
	}
	bare, err := newBareList(items, key)
	if err != nil {
		return err
	}
	ln, err := demo.Listen(addr)
	if err != nil {
		return err
	}
	log := demo.Logger()
	ctx, stop := demo.SignalContext()
	defer stop()
	switch framework {
	case "gin":
		engine, err := ginEngine(api, bare)
		if err != nil {
			return err
		}
		return demo.ServeHTTP(ctx, log, ln, engine)
	case "nethttp":
		mux, err := netHTTPMux(api, bare)
		if err != nil {
			return err
		}
		return demo.ServeHTTP(ctx, log, ln, mux)
	default:
		app, err := fiberApp(api, bare)
		if err != nil {
			return err
		}
		return demo.ServeFiber(ctx, log, ln, app)
	}
}

// bareList is what the bare side answers to GET /v1/inventory: the API's
// bytes for the list, with its headers and a tag of the same length, after
// a plain bearer check.
type bareList struct {
	bearer  string
	body    []byte
	length  string
	headers [][2]string
}

func newBareList(items []inventory.Item, key string) (*bareList, error) {
	body, err := json.Marshal(items) // the API's bytes: its tests hold it to encoding/json's
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return &bareList{
		bearer: "Bearer " + key,
		body:   body,
		length: strconv.Itoa(len(body)),
		headers: [][2]string{ // the API's list headers
			{"Cache-Control", "private, no-cache"},
			{"Etag", `"` + hex.EncodeToString(sum[:16]) + `"`},
			{"Vary", "Accept-Encoding"},
			{"X-Content-Type-Options", "nosniff"},
		},
	}, nil
}

// ginEngine serves api (the lib side), or bare when api is nil.
func ginEngine(api *inventory.API, bare *bareList) (*gin.Engine, error) {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if api != nil {
		return engine, inventorygin.Register(engine.Group("/v1"), api)
	}
	engine.GET("/v1/inventory", func(c *gin.Context) {
		if c.Request.Header.Get("Authorization") != bare.bearer {
			c.Status(http.StatusUnauthorized)
			return
		}
		for _, h := range bare.headers {
			c.Header(h[0], h[1])
		}
		c.Header("Content-Length", bare.length)
		c.Data(http.StatusOK, "application/json", bare.body)
	})
	return engine, nil
}

// netHTTPMux serves api (the lib side), or bare when api is nil.
func netHTTPMux(api *inventory.API, bare *bareList) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	if api != nil {
		return mux, api.Register(mux, "/v1")
	}
	mux.HandleFunc("GET /v1/inventory", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != bare.bearer {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		for _, h := range bare.headers {
			w.Header().Set(h[0], h[1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", bare.length)
		_, _ = w.Write(bare.body)
	})
	return mux, nil
}

// fiberApp serves api (the lib side), or bare when api is nil.
func fiberApp(api *inventory.API, bare *bareList) (*fiber.App, error) {
	app := demo.NewFiberApp()
	if api != nil {
		return app, inventoryfiber.Register(app.Group("/v1"), api)
	}
	app.Get("/v1/inventory", func(c *fiber.Ctx) error {
		if c.Get(fiber.HeaderAuthorization) != bare.bearer {
			return c.SendStatus(http.StatusUnauthorized)
		}
		for _, h := range bare.headers {
			c.Set(h[0], h[1])
		}
		c.Set(fiber.HeaderContentType, "application/json")
		return c.Send(bare.body)
	})
	return app, nil
}
