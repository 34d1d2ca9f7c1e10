// Command redis is the inventory server (package server, command
// inventory-server) with one addition for a first try: with no REDIS_URL
// it starts an embedded Redis (miniredis) in the process, so it runs with
// zero setup. It is the README's "run it" command:
//
//	go run ./examples/redis
//
// Point it at a real Redis, shared by every replica, with REDIS_URL, in
// go-redis's URL forms (see redisstore.ParseURL); it is then the same as
// inventory-server:
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/redis -framework fiber
//	REDIS_URL='redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000' …   # a Cluster
//	REDIS_URL='redis://10.0.0.1:7000?cluster=true' …                          # a Cluster, one seed
//	REDIS_URL='redis://10.0.0.1:26379?master_name=shop&addr=10.0.0.2:26379' …  # Sentinel
//
// The settings (-h lists them) and exit statuses are the server's:
// docs/OPERATING.md. Two defaults differ, for a first try: with no API key
// (INVENTORY_API_KEYS, INVENTORY_API_KEYS_FILE) it generates one and
// prints it once, which inventory-server never does, and with no -seed it
// initializes its store (one never initialized) with the demo inventory
// (-seed demo), where inventory-server initializes nothing.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/alicebob/miniredis/v2"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/server"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

func main() {
	log := server.NewLogger(os.Stderr)
	cfg, err := server.Parse("redis", os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, server.ErrVersion) {
		fmt.Println(server.BuildInfo())
	}
	if err == nil {
		err = run(cfg, log)
	}
	os.Exit(server.ExitStatus(log, err))
}

// run serves with cfg until SIGINT or SIGTERM, on an embedded Redis when
// cfg names none, with a generated key when cfg has none, and the demo
// inventory as the seed when cfg names none.
func run(cfg server.Config, log *slog.Logger) error {
	keys, generated, err := demo.APIKeys(cfg.APIKeys, cfg.APIKeysFile, os.Stderr)
	if err != nil {
		return server.ConfigError{Err: err}
	}
	if generated {
		cfg.APIKeys = keys
	}
	if cfg.Seed == "" {
		cfg.Seed = "demo"
	}
	if cfg.RedisURL == "" {
		if cfg.RedisCAFile != "" || cfg.RedisCertFile != "" || cfg.RedisPasswordFile != "" {
			return server.ConfigError{Err: errors.New("INVENTORY_REDIS_CA_FILE, INVENTORY_REDIS_CERT_FILE and INVENTORY_REDIS_PASSWORD_FILE apply to the Redis of REDIS_URL, which is not set")}
		}
		embedded := miniredis.NewMiniRedis()
		if err := embedded.Start(); err != nil {
			return fmt.Errorf("starting the embedded Redis: %w", err)
		}
		defer embedded.Close()
		log.Info("REDIS_URL is not set: using an embedded in-memory Redis (miniredis) whose data is lost when the process stops; point at a real Redis with REDIS_URL=redis://127.0.0.1:6379/0",
			"addr", embedded.Addr())
		cfg.RedisURL = "redis://" + embedded.Addr() + "/0"
	}
	redis.SetLogger(redisstore.NewGoRedisLogger(log)) // process-wide: go-redis has one logger
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return server.Run(ctx, cfg, log)
}
