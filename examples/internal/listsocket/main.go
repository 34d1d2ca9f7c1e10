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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
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
	key, _, _ := strings.Cut(os.Getenv("INVENTORY_API_KEYS"), ",")
	if key == "" {
		return errors.New("INVENTORY_API_KEYS is not set")
	}
	items := benchfix.Items(n)
	store, err := memstore.New(items...)
	if err != nil {
		return err
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(key))
	if err != nil {
		return err
	}
	body, err := json.Marshal(items) // the API's bytes: its tests hold it to encoding/json's
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	headers := [][2]string{ // the API's list headers, with a tag of the same length
		{"Cache-Control", "private, no-cache"},
		{"Etag", `"` + hex.EncodeToString(sum[:16]) + `"`},
		{"Vary", "Accept-Encoding"},
		{"X-Content-Type-Options", "nosniff"},
	}
	bearer := "Bearer " + key
	length := strconv.Itoa(len(body))
	ln, err := demo.Listen(addr)
	if err != nil {
		return err
	}
	log := demo.Logger()
	ctx, stop := demo.SignalContext()
	defer stop()
	switch framework + "/" + side {
	case "gin/lib", "gin/bare":
		gin.SetMode(gin.ReleaseMode)
		engine := gin.New()
		if side == "lib" {
			if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
				return err
			}
		} else {
			engine.GET("/v1/inventory", func(c *gin.Context) {
				if c.Request.Header.Get("Authorization") != bearer {
					c.Status(http.StatusUnauthorized)
					return
				}
				for _, h := range headers {
					c.Header(h[0], h[1])
				}
				c.Header("Content-Length", length)
				c.Data(http.StatusOK, "application/json", body)
			})
		}
		return demo.ServeHTTP(ctx, log, ln, engine)
	case "nethttp/lib", "nethttp/bare":
		mux := http.NewServeMux()
		if side == "lib" {
			if err := api.Register(mux, "/v1"); err != nil {
				return err
			}
		} else {
			mux.HandleFunc("GET /v1/inventory", func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != bearer {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				for _, h := range headers {
					w.Header().Set(h[0], h[1])
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", length)
				_, _ = w.Write(body)
			})
		}
		return demo.ServeHTTP(ctx, log, ln, mux)
	case "fiber/lib", "fiber/bare":
		app := demo.NewFiberApp()
		if side == "lib" {
			if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
				return err
			}
		} else {
			app.Get("/v1/inventory", func(c *fiber.Ctx) error {
				if c.Get(fiber.HeaderAuthorization) != bearer {
					return c.SendStatus(http.StatusUnauthorized)
				}
				for _, h := range headers {
					c.Set(h[0], h[1])
				}
				c.Set(fiber.HeaderContentType, "application/json")
				return c.Send(body)
			})
		}
		go func() {
			<-ctx.Done()
			_ = app.ShutdownWithContext(context.Background())
		}()
		return app.Listener(ln)
	}
	return fmt.Errorf("-framework %q -side %q: want gin, fiber or nethttp and lib or bare", framework, side)
}
