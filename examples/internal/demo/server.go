package demo

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
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

// The examples' timeouts, those of inventory-server: a slow or stalled
// client (slowloris) cannot hold a connection longer, and a shutdown
// waits at most shutdownGrace for in-flight requests.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownGrace     = 10 * time.Second
	maxHeaderBytes    = 64 << 10
)

// ServeHTTP serves h on ln with production timeouts until ctx is done, then
// shuts down gracefully: it stops accepting, lets in-flight requests
// finish (up to 10 s) and returns nil.
func ServeHTTP(ctx context.Context, log *slog.Logger, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return serveUntil(ctx, log, func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}, srv.Shutdown)
}

// NewFiberApp is a Fiber app as docs/EMBEDDING.md's recipe makes it
// (inventoryfiber.NewApp: bodies streamed to the API, multipart bodies
// left to it, no answer that repeats the request's bytes), with the
// timeouts of ServeHTTP.
func NewFiberApp() *fiber.App {
	return inventoryfiber.NewApp(fiber.Config{
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		ReadBufferSize:        maxHeaderBytes,
		BodyLimit:             1 << 20,
		DisableStartupMessage: true,
	})
}

// ServeFiber serves app on ln until ctx is done, then shuts down gracefully
// as ServeHTTP does.
func ServeFiber(ctx context.Context, log *slog.Logger, ln net.Listener, app *fiber.App) error {
	return serveUntil(ctx, log, func() error { return app.Listener(ln) }, app.ShutdownWithContext)
}

// serveUntil runs serve until ctx is done, then calls shutdown with
// shutdownGrace to finish in-flight requests.
func serveUntil(ctx context.Context, log *slog.Logger, serve func() error, shutdown func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		return err
	}
	return <-errc
}
