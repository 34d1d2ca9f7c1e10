// Command redis is the full inventory server: the API under /v1 on a Redis
// store, with Gin or Fiber, health and readiness probes, structured logs
// and a graceful shutdown. It is the README's "run it" command:
//
//	go run ./examples/redis
//
// With no REDIS_URL it starts an embedded Redis (miniredis) in the process,
// so it runs with zero setup; point it at a real Redis, shared by every
// replica, with REDIS_URL, in go-redis's URL forms (see
// redisstore.ParseURL):
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/redis -framework fiber
//	REDIS_URL='redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000' …   # a Cluster
//	REDIS_URL='redis://10.0.0.1:7000?cluster=true' …                          # a Cluster, one seed
//	REDIS_URL='redis://10.0.0.1:26379?master_name=shop&addr=10.0.0.2:26379' …  # Sentinel
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
//	-replica-acks N       after each write, wait until N replicas acknowledge it
//	                      (Redis WAIT); fewer in time is 503 (INVENTORY_REDIS_REPLICA_ACKS;
//	                      default 0: do not wait)
//	-replica-ack-timeout D  how long a write waits for those acknowledgements
//	                      (INVENTORY_REDIS_REPLICA_ACK_TIMEOUT; default 500ms;
//	                      below the store timeout)
//	REDIS_URL             one node, Cluster or Sentinel URL, as above (default:
//	                      embedded miniredis)
//	INVENTORY_API_KEYS    comma-separated API keys (or INVENTORY_API_KEYS_FILE);
//	                      with neither, a random key is generated and printed once
//
// Routes: GET /v1/inventory, PATCH /v1/inventory/{petId}, GET /healthz (the
// process is alive), GET /readyz (the store is seeded and can serve: see
// redisstore.Store.Ready), GET /openapi.yaml, GET /metrics (Prometheus;
// traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set:
// docs/OBSERVABILITY.md).
//
// The server listens first, then seeds the store in the background, and
// /readyz answers 503 until the seed is in. The store is seeded only when
// it holds no entry at all (atomically, so replicas starting together seed
// once): a restart never overwrites real stock.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
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
	replicaAcks  int
	ackTimeout   time.Duration
}

// parseConfig reads the flags in args, with defaults from getenv.
func parseConfig(args []string, getenv func(string) string, usage io.Writer) (config, error) {
	cfg := config{
		addr:         ":8080",
		framework:    "gin",
		storeTimeout: 2 * time.Second,
		redisURL:     getenv("REDIS_URL"),
		redisPrefix:  redisstore.DefaultKeyPrefix,
		ackTimeout:   500 * time.Millisecond,
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
	if v := getenv("INVENTORY_REDIS_REPLICA_ACKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return config{}, fmt.Errorf("INVENTORY_REDIS_REPLICA_ACKS=%q is not a whole number of replicas", v)
		}
		cfg.replicaAcks = n
	}
	if v := getenv("INVENTORY_REDIS_REPLICA_ACK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return config{}, fmt.Errorf("INVENTORY_REDIS_REPLICA_ACK_TIMEOUT=%q is not a duration such as 500ms", v)
		}
		cfg.ackTimeout = d
	}
	fs := flag.NewFlagSet("redis", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.addr, "addr", cfg.addr, "listen address (env ADDR)")
	fs.StringVar(&cfg.framework, "framework", cfg.framework, "HTTP framework: gin or fiber (env INVENTORY_FRAMEWORK)")
	fs.StringVar(&cfg.seedFile, "seed", "", "JSON array of items to seed an empty store with (default: the demo inventory)")
	fs.DurationVar(&cfg.storeTimeout, "store-timeout", cfg.storeTimeout, "deadline of each store call (env INVENTORY_STORE_TIMEOUT)")
	fs.StringVar(&cfg.redisPrefix, "redis-prefix", cfg.redisPrefix, "prefix of the Redis keys, to keep several inventories in one Redis (env INVENTORY_REDIS_PREFIX)")
	fs.IntVar(&cfg.replicaAcks, "replica-acks", cfg.replicaAcks, "after each write, wait until this many replicas acknowledge it; fewer in time is 503 (env INVENTORY_REDIS_REPLICA_ACKS; 0: do not wait)")
	fs.DurationVar(&cfg.ackTimeout, "replica-ack-timeout", cfg.ackTimeout, "how long a write waits for the replicas' acknowledgements (env INVENTORY_REDIS_REPLICA_ACK_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q; settings are flags (-addr, -framework, -seed, -store-timeout, -redis-prefix, -replica-acks, -replica-ack-timeout)", fs.Arg(0))
	}
	if cfg.framework != "gin" && cfg.framework != "fiber" {
		return config{}, fmt.Errorf("framework %q: want gin or fiber", cfg.framework)
	}
	if cfg.storeTimeout <= 0 {
		return config{}, fmt.Errorf("store timeout %v: must be positive", cfg.storeTimeout)
	}
	if cfg.replicaAcks < 0 || cfg.replicaAcks > 16 {
		return config{}, fmt.Errorf("replica acks %d: must be between 0 and 16", cfg.replicaAcks)
	}
	if cfg.replicaAcks > 0 && (cfg.ackTimeout < time.Millisecond || cfg.ackTimeout >= cfg.storeTimeout) {
		return config{}, fmt.Errorf("replica ack timeout %v: must be at least 1ms and below the store timeout (%v), which bounds the whole write", cfg.ackTimeout, cfg.storeTimeout)
	}
	return cfg, nil
}

// redisLogger sends go-redis's own log lines (failed dials and the like)
// to the server's log.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}
