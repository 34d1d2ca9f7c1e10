package demo

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/server"
)

// Logger is the examples' structured logger: text lines on stderr.
func Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

// SignalContext is cancelled by SIGINT or SIGTERM, which starts a graceful
// shutdown.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Listen opens addr. It is separate from serving so that a caller can log
// the real address (":0" picks a free port) before serving.
func Listen(addr string) (net.Listener, error) {
	return net.Listen("tcp", addr)
}

// ServeHTTP serves h on ln with production timeouts until ctx is done, then
// shuts down gracefully: the server's own (server.ServeHTTP).
func ServeHTTP(ctx context.Context, log *slog.Logger, ln net.Listener, h http.Handler) error {
	return server.ServeHTTP(ctx, log, ln, h)
}

// FiberConfig is a fiber.Config with the same timeouts as ServeHTTP
// (server.FiberConfig).
func FiberConfig() fiber.Config { return server.FiberConfig() }

// ServeFiber serves app on ln until ctx is done, then shuts down gracefully
// as ServeHTTP does (server.ServeFiber).
func ServeFiber(ctx context.Context, log *slog.Logger, ln net.Listener, app *fiber.App) error {
	return server.ServeFiber(ctx, log, ln, app)
}
