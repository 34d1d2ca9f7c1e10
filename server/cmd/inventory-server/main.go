// Command inventory-server serves the inventory API on a Redis store: the
// server of package server, set up by flags and environment variables
// (-h lists them; docs/OPERATING.md too).
//
//	go install github.com/petinventory/petinventory/server/cmd/inventory-server@v0.1.0
//	REDIS_URL=redis://127.0.0.1:6379/0 INVENTORY_API_KEYS_FILE=/run/secrets/keys inventory-server
//
// REDIS_URL is required. Exit status: 0 after a graceful shutdown (SIGINT,
// SIGTERM) or -h; 2 when the settings are wrong; 1 when serving fails.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/petinventory/petinventory/server"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

// version is the release, set by scripts/release/image.sh with
// -ldflags "-X main.version=…"; a binary from go install reads its module
// version instead.
var version string

func main() {
	log := server.NewLogger(os.Stderr)
	cfg, err := server.Parse("inventory-server", os.Args[1:], os.Getenv, os.Stderr)
	if err == nil {
		log.Info("inventory-server", "version", buildVersion())
		redis.SetLogger(redisstore.NewGoRedisLogger(log)) // process-wide: go-redis has one logger
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = server.Run(ctx, cfg, log)
		stop()
	}
	os.Exit(server.ExitStatus(log, err))
}

// buildVersion is the version of this build: the one the image was built
// with, or the module version go install recorded ("(devel)" in a clone).
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "unknown"
}
