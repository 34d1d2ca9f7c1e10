// Command inventory-server serves the inventory API on a Redis store: the
// server of package server, set up by flags and environment variables
// (-h lists them; docs/OPERATING.md too).
//
//	go install github.com/petinventory/petinventory/server/cmd/inventory-server@v0.1.0
//	REDIS_URL=redis://127.0.0.1:6379/0 INVENTORY_API_KEYS_FILE=/run/secrets/keys inventory-server
//
// REDIS_URL and an API key (INVENTORY_API_KEYS or INVENTORY_API_KEYS_FILE)
// are required; nothing is seeded unless -seed says what. -init-only
// -seed FILE initializes the store and exits, with no API key (a seed
// Job). -version prints the version, VCS revision and Go version. Exit
// status: 0 after a graceful shutdown (SIGINT, SIGTERM), -h, -version or
// an -init-only that initialized the store; 2 when the settings are wrong;
// 1 when serving, or -init-only, fails.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/petinventory/petinventory/server"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

func main() {
	log := server.NewLogger(os.Stderr)
	cfg, err := server.Parse("inventory-server", os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, server.ErrVersion) {
		fmt.Println(server.BuildInfo())
	}
	if err == nil {
		b := server.BuildInfo()
		log.Info("inventory-server", "version", b.Version, "revision", b.Revision, "go", b.GoVersion)
		redis.SetLogger(redisstore.NewGoRedisLogger(log)) // process-wide: go-redis has one logger
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = server.Run(ctx, cfg, log)
		stop()
	}
	os.Exit(server.ExitStatus(log, err))
}
