// Command gin is an existing Gin application that mounts the inventory API
// under /v1 next to its own routes and middleware, on the in-memory store.
//
//	go run ./examples/gin -addr 127.0.0.1:8081
//
// Keys come from INVENTORY_API_KEYS (comma-separated) or
// INVENTORY_API_KEYS_FILE; with neither, a key is generated and printed once.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	flag.Parse()
	log := demo.Logger()
	if err := run(*addr, log); err != nil {
		log.Error("gin example stopped", "error", err)
		os.Exit(1)
	}
}

func run(addr string, log *slog.Logger) error {
	ctx, stop := demo.SignalContext()
	defer stop()

	keys, err := demo.EnvAPIKeys(os.Stderr)
	if err != nil {
		return err
	}
	store, err := memstore.New(demo.Items()...)
	if err != nil {
		return err
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(keys...), inventory.WithLogger(log))
	if err != nil {
		return err
	}

	// The host application: its own middleware and routes...
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery(), requestLogger(log))
	engine.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	engine.GET("/openapi.yaml", func(c *gin.Context) { c.Data(http.StatusOK, "application/yaml", inventory.OpenAPI()) })

	// ...and the inventory, mounted in one call.
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		return err
	}
	// Methods gin routes nowhere (PROPFIND, a lowercase get) get the API's 405.
	noRoute, err := inventorygin.NoRoute(api, "/v1")
	if err != nil {
		return err
	}
	engine.NoRoute(noRoute)

	ln, err := demo.Listen(addr)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "framework", "gin", "store", "memory",
		"try", fmt.Sprintf("curl -H 'Authorization: Bearer <key>' http://%s/v1/inventory", ln.Addr()))
	return demo.ServeHTTP(ctx, log, ln, engine)
}

// requestLogger is the host app's own middleware: one line per request,
// without the Authorization header.
func requestLogger(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		log.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", c.Request.Method),
			slog.String("path", c.Request.URL.Path),
			slog.Int("status", c.Writer.Status()),
			slog.Duration("took", time.Since(start)))
	}
}
