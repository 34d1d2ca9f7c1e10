package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Timeouts of ServeHTTP and FiberConfig. A slow or stalled client (slowloris) cannot hold
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

// ServeHTTP serves h on ln until ctx is done, with the server's timeouts
// (a slow or stalled client cannot hold a connection past them; headers
// are bounded to 64 KiB), then shuts down gracefully: it stops accepting,
// lets in-flight requests finish (up to 10 s) and returns nil. Run serves
// Gin through it; use it for your own handler.
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

// serveUntil runs serve until ctx is done, then calls shutdown with
// shutdownGrace to finish in-flight requests, and returns what serve
// returned (or shutdown's error).
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

// FiberConfig is a fiber.Config with the same timeouts as ServeHTTP.
// StreamRequestBody hands bodies to handlers as a stream, so the inventory
// refuses a huge update after reading its own limit + 1 byte instead of
// fasthttp buffering it; BodyLimit still bounds what fasthttp buffers for
// routes that read the body whole.
func FiberConfig() fiber.Config {
	return fiber.Config{
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ReadBufferSize:    maxHeaderBytes,
		BodyLimit:         1 << 20,
		StreamRequestBody: true,
		// fasthttp would otherwise parse a multipart body before any
		// handler runs and answer a malformed one with its own 400,
		// where the contract says 415.
		DisablePreParseMultipartForm: true,
		DisableStartupMessage:        true,
	}
}

// ServeFiber serves app (made with FiberConfig) on ln until ctx is done,
// then shuts down gracefully as ServeHTTP does.
func ServeFiber(ctx context.Context, log *slog.Logger, ln net.Listener, app *fiber.App) error {
	return serveUntil(ctx, log, func() error { return app.Listener(ln) }, app.ShutdownWithContext)
}
