// Command fiber is an existing Fiber application that mounts the inventory
// API under /v1 next to its own routes and middleware, on the in-memory
// store.
//
//	go run ./examples/fiber -addr 127.0.0.1:8082
//
// Keys come from INVENTORY_API_KEYS (comma-separated) or
// INVENTORY_API_KEYS_FILE; with neither, a key is generated and printed once.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	flag.Parse()
	log := demo.Logger()
	if err := run(*addr, log); err != nil {
		log.Error("fiber example stopped", "error", err)
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
	app := demo.NewFiberApp()
	app.Use(requestLogger(log))
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok\n") })
	app.Get("/openapi.yaml", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "application/yaml")
		return c.Send(inventory.OpenAPI())
	})

	// ...and the inventory, mounted in one call.
	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
		return err
	}
	// Methods fiber routes nowhere (PROPFIND, a lowercase get) get the API's
	// 405, and a body that stalls before any handler runs the API's 408.
	if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil {
		return err
	}

	ln, err := demo.Listen(addr)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "framework", "fiber", "store", "memory",
		"try", fmt.Sprintf("curl -H 'Authorization: Bearer <key>' http://%s/v1/inventory", ln.Addr()))
	return demo.ServeFiber(ctx, log, ln, app)
}

// requestLogger is the host app's own middleware: one line per request,
// without the Authorization header.
func requestLogger(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		log.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", c.Method()),
			slog.String("path", c.Path()),
			slog.Int("status", c.Response().StatusCode()),
			slog.Duration("took", time.Since(start)))
		return err
	}
}
