// Command redis is the full inventory server: the API under /v1 on a Redis
// store, with Gin or Fiber, health and readiness probes, structured logs
// and a graceful shutdown. It is the README's "run it" command:
//
//	go run ./examples/redis
//
// With no REDIS_URL it starts an embedded Redis (miniredis) in the process,
// so it runs with zero setup; point it at a real Redis, shared by every
// replica, with REDIS_URL:
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/redis -framework fiber
//
// Settings (a flag wins over its environment variable):
//
//	-addr ADDR            listen address (ADDR; default :8080)
//	-framework gin|fiber  HTTP framework (INVENTORY_FRAMEWORK; default gin)
//	-seed FILE            JSON array of items to seed an empty store with
//	                      (default: the demo inventory)
//	-store-timeout D      deadline of each store call (INVENTORY_STORE_TIMEOUT;
//	                      default 2s); past it the client gets 503
//	-redis-prefix P       prefix of the Redis keys (INVENTORY_REDIS_PREFIX;
//	                      default inventory), for several inventories in one Redis
//	REDIS_URL             redis://, rediss:// or unix:// URL (default: embedded miniredis)
//	INVENTORY_API_KEYS    comma-separated API keys (or INVENTORY_API_KEYS_FILE);
//	                      with neither, a random key is generated and printed once
//
// Routes: GET /v1/inventory, PATCH /v1/inventory/{petId}, GET /healthz (the
// process is alive), GET /readyz (Redis answers), GET /openapi.yaml,
// GET /metrics (Prometheus; traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT
// is set: docs/OBSERVABILITY.md).
//
// The store is seeded only when it holds no entry at all (atomically, so
// replicas starting together seed once): a restart never overwrites real
// stock.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/petinventory/petinventory/examples/internal/demo"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

func main() {
	log := demo.Logger()
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		log.Error("invalid configuration", "error", err)
		os.Exit(2)
	}
	redis.SetLogger(redisLogger{log}) // process-wide: go-redis has one logger
	ctx, stop := demo.SignalContext()
	defer stop()
	if err := run(ctx, cfg, log, os.Stderr, nil); err != nil {
		log.Error("inventory server stopped", "error", err)
		os.Exit(1)
	}
}

// config is the server's configuration, from flags and environment.
type config struct {
	addr         string
	framework    string
	seedFile     string
	storeTimeout time.Duration
	redisURL     string
	redisPrefix  string
}

// parseConfig reads the flags in args, with defaults from getenv.
func parseConfig(args []string, getenv func(string) string, usage io.Writer) (config, error) {
	cfg := config{
		addr:         ":8080",
		framework:    "gin",
		storeTimeout: 2 * time.Second,
		redisURL:     getenv("REDIS_URL"),
		redisPrefix:  redisstore.DefaultKeyPrefix,
	}
	if v := getenv("INVENTORY_REDIS_PREFIX"); v != "" {
		cfg.redisPrefix = v
	}
	if v := getenv("ADDR"); v != "" {
		cfg.addr = v
	}
	if v := getenv("INVENTORY_FRAMEWORK"); v != "" {
		cfg.framework = v
	}
	if v := getenv("INVENTORY_STORE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return config{}, fmt.Errorf("INVENTORY_STORE_TIMEOUT=%q is not a duration such as 2s or 500ms", v)
		}
		cfg.storeTimeout = d
	}
	fs := flag.NewFlagSet("redis", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.addr, "addr", cfg.addr, "listen address (env ADDR)")
	fs.StringVar(&cfg.framework, "framework", cfg.framework, "HTTP framework: gin or fiber (env INVENTORY_FRAMEWORK)")
	fs.StringVar(&cfg.seedFile, "seed", "", "JSON array of items to seed an empty store with (default: the demo inventory)")
	fs.DurationVar(&cfg.storeTimeout, "store-timeout", cfg.storeTimeout, "deadline of each store call (env INVENTORY_STORE_TIMEOUT)")
	fs.StringVar(&cfg.redisPrefix, "redis-prefix", cfg.redisPrefix, "prefix of the Redis keys, to keep several inventories in one Redis (env INVENTORY_REDIS_PREFIX)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q; settings are flags (-addr, -framework, -seed, -store-timeout, -redis-prefix)", fs.Arg(0))
	}
	if cfg.framework != "gin" && cfg.framework != "fiber" {
		return config{}, fmt.Errorf("framework %q: want gin or fiber", cfg.framework)
	}
	if cfg.storeTimeout <= 0 {
		return config{}, fmt.Errorf("store timeout %v: must be positive", cfg.storeTimeout)
	}
	return cfg, nil
}

// redisLogger sends go-redis's own log lines (failed dials and the like)
// to the server's log.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}
