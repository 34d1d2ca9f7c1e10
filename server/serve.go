package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// The servers' timeouts. A slow or stalled client (slowloris) cannot hold
// a connection longer than these, and a shutdown waits at most
// shutdownGrace for in-flight requests.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownGrace     = 10 * time.Second
	// maxHeaderBytes bounds request headers; larger ones get 431.
	maxHeaderBytes = 64 << 10
)

// httpServer is one server of the process: what it serves on ln, and how
// it stops.
type httpServer struct {
	ln       net.Listener
	serve    func(net.Listener) error // returns nil once shut down
	shutdown func(context.Context) error
}

// netHTTPServer serves h with net/http and the server's timeouts (headers
// bounded to 64 KiB); its own errors go to log at WARN.
func netHTTPServer(log *slog.Logger, ln net.Listener, h http.Handler) httpServer {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return httpServer{ln: ln, serve: func(ln net.Listener) error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}, shutdown: srv.Shutdown}
}

// newFiberApp is a Fiber app with the same timeouts as netHTTPServer, and
// the settings the adapter needs from inventoryfiber.NewApp (bodies
// streamed to the API, multipart bodies left to it, no answer or log
// line that repeats a malformed request head); BodyLimit still bounds
// what fasthttp buffers for routes that read the body whole.
func newFiberApp() *fiber.App {
	return inventoryfiber.NewApp(fiber.Config{
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		ReadBufferSize:        maxHeaderBytes,
		BodyLimit:             1 << 20,
		DisableStartupMessage: true,
	})
}

// fiberHTTPServer serves app.
func fiberHTTPServer(app *fiber.App) httpServer {
	return httpServer{serve: app.Listener, shutdown: app.ShutdownWithContext}
}

// serveAll runs every server until ctx is done or one of them fails, then
// shuts them all down, giving in-flight requests shutdownGrace, and
// returns the first failure (nil after a shutdown asked by ctx).
func serveAll(ctx context.Context, log *slog.Logger, servers ...httpServer) error {
	errc := make(chan error, len(servers))
	for _, s := range servers {
		go func() { errc <- s.serve(s.ln) }()
	}
	var first error
	running := len(servers)
	select {
	case first = <-errc: // a server stopped by itself: stop the others
		running--
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight requests", "grace", shutdownGrace)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, s := range servers {
		if err := s.shutdown(sctx); err != nil && first == nil {
			first = err
		}
	}
	for ; running > 0; running-- {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}
