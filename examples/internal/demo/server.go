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
)

// Timeouts of the example servers. A slow or stalled client (slowloris)
// cannot hold a connection longer than these, and a shutdown waits at most
// ShutdownGrace for in-flight requests.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	WriteTimeout      = 15 * time.Second
	IdleTimeout       = 60 * time.Second
	ShutdownGrace     = 10 * time.Second
	// MaxHeaderBytes bounds request headers; larger ones get 431.
	MaxHeaderBytes = 64 << 10
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
// shuts down gracefully: it stops accepting, lets in-flight requests finish
// (up to ShutdownGrace) and returns nil.
func ServeHTTP(ctx context.Context, log *slog.Logger, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
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
// ShutdownGrace to finish in-flight requests, and returns what serve
// returned (or shutdown's error).
func serveUntil(ctx context.Context, log *slog.Logger, serve func() error, shutdown func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "grace", ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		return err
	}
	return <-errc
}

// FiberConfig is a fiber.Config with the same production timeouts as
// ServeHTTP. StreamRequestBody hands bodies to handlers as a stream, so the
// inventory refuses a huge update after reading its own limit + 1 byte
// instead of fasthttp buffering it; BodyLimit still bounds what fasthttp
// buffers for routes that read the body whole.
func FiberConfig() fiber.Config {
	return fiber.Config{
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		ReadBufferSize:    MaxHeaderBytes,
		BodyLimit:         1 << 20,
		StreamRequestBody: true,
		// fasthttp would otherwise parse a multipart body before any
		// handler runs and answer a malformed one with its own 400,
		// where the contract says 415.
		DisablePreParseMultipartForm: true,
		DisableStartupMessage:        true,
	}
}

// ServeFiber serves app on ln until ctx is done, then shuts down gracefully
// as ServeHTTP does.
func ServeFiber(ctx context.Context, log *slog.Logger, ln net.Listener, app *fiber.App) error {
	return serveUntil(ctx, log, func() error { return app.Listener(ln) }, app.ShutdownWithContext)
}
