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
//	-redis-allow-eviction  accept a Redis whose maxmemory-policy may evict the
//	                      store's keys (allkeys-*); otherwise such a Redis is
//	                      not ready (INVENTORY_REDIS_ALLOW_EVICTION=1)
//	REDIS_URL             one node, Cluster or Sentinel URL, as above (default:
//	                      embedded miniredis)
//	INVENTORY_REDIS_CA_FILE   PEM file of the CA that signed the Redis server's
//	                      certificate (a private CA): trusted for Redis instead of
//	                      the system's trust store, which other connections keep
//	INVENTORY_REDIS_CERT_FILE, INVENTORY_REDIS_KEY_FILE  PEM client certificate
//	                      and key, for a Redis that asks for one (mutual TLS)
//	INVENTORY_REDIS_PASSWORD_FILE  file holding the Redis password, read again
//	                      for every new connection: a rotated password is used
//	                      once the old connections close, without a restart
//	INVENTORY_API_KEYS    comma-separated API keys (or INVENTORY_API_KEYS_FILE,
//	                      one key per line, re-read when it changes); with
//	                      neither, a random key is generated and printed once
//
// The TLS files apply to every node of the URL (and, in the Sentinel form,
// to the sentinels too) and turn TLS on, as rediss:// does.
// docs/SECURITY.md lists the configuration faults and their fixes, and the
// least ACL rule the store needs.
//
// Exit status: 0 after a graceful shutdown (SIGINT, SIGTERM) or -h; 2 when
// the settings are wrong (a flag, an environment variable, REDIS_URL, or a
// file they name cannot be used); 1 when serving fails (the address is
// taken, for example).
//
// Routes: GET /v1/inventory, PATCH /v1/inventory/{petId}, GET /healthz (the
// process is alive), GET /readyz (the store is seeded and can serve: see
// redisstore.Store.Ready), GET /openapi.yaml, GET /metrics (Prometheus;
// traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set:
// docs/OBSERVABILITY.md).
//
// The server listens first, then seeds the store in the background: until
// the seed is in and the store is ready (redisstore.Store.Ready), /v1
// answers 503 unavailable with Retry-After and /readyz 503 with the cause.
// The store is seeded only when it holds no entry at all (atomically, so
// replicas starting together seed once): a restart never overwrites real
// stock.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
		os.Exit(exitConfig)
	}
	redis.SetLogger(redisstore.NewGoRedisLogger(log)) // process-wide: go-redis has one logger
	ctx, stop := demo.SignalContext()
	err = run(ctx, cfg, log, os.Stderr, nil)
	stop()
	var ce configError
	switch {
	case errors.As(err, &ce):
		log.Error("invalid configuration", "error", err)
		os.Exit(exitConfig)
	case err != nil:
		log.Error("inventory server stopped", "error", err)
		os.Exit(1)
	}
}

// exitConfig is the exit status of wrong settings, the one the flag
// package uses for a bad flag.
const exitConfig = 2

// configError is an error of the settings (REDIS_URL, a file they name, an
// API key), found by run before it serves: main exits with exitConfig.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

// badConfig wraps a non-nil err as a configError.
func badConfig(err error) error {
	if err == nil {
		return nil
	}
	return configError{err}
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
	// Files for a managed Redis: CA, client certificate and key (TLS),
	// and the password, read for every new connection.
	caFile, certFile, keyFile string
	passwordFile              string
	allowEviction             bool
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
		caFile:       getenv("INVENTORY_REDIS_CA_FILE"),
		certFile:     getenv("INVENTORY_REDIS_CERT_FILE"),
		keyFile:      getenv("INVENTORY_REDIS_KEY_FILE"),
		passwordFile: getenv("INVENTORY_REDIS_PASSWORD_FILE"),
	}
	if v := getenv("INVENTORY_REDIS_ALLOW_EVICTION"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return config{}, fmt.Errorf("INVENTORY_REDIS_ALLOW_EVICTION=%q: want 1 or true (allow), 0 or false (refuse)", v)
		}
		cfg.allowEviction = b
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
	fs.BoolVar(&cfg.allowEviction, "redis-allow-eviction", cfg.allowEviction, "accept a Redis whose maxmemory-policy may evict the store's keys (allkeys-*); otherwise it is not ready (env INVENTORY_REDIS_ALLOW_EVICTION=1)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of %s (a flag wins over its environment variable):\n", fs.Name())
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), usageFooter)
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q; settings are flags (-addr, -framework, -seed, -store-timeout, -redis-prefix, -replica-acks, -replica-ack-timeout, -redis-allow-eviction) and environment variables (-h lists them)", fs.Arg(0))
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
	if (cfg.certFile == "") != (cfg.keyFile == "") {
		return config{}, errors.New("INVENTORY_REDIS_CERT_FILE and INVENTORY_REDIS_KEY_FILE go together (a client certificate and its key): set both or neither")
	}
	return cfg, nil
}

// usageFooter ends -h: the settings that are environment variables only,
// and the exit statuses.
const usageFooter = `
Environment:
  REDIS_URL                      the Redis: one node, Cluster or Sentinel URL (default: an embedded miniredis)
  INVENTORY_REDIS_CA_FILE        PEM CA certificate(s) the Redis server's certificate is checked against (for Redis, instead of the system's)
  INVENTORY_REDIS_CERT_FILE      PEM client certificate, for mutual TLS (with INVENTORY_REDIS_KEY_FILE)
  INVENTORY_REDIS_KEY_FILE       its PEM private key
  INVENTORY_REDIS_PASSWORD_FILE  file holding the Redis password, read for every new connection (rotation without a restart)
  INVENTORY_API_KEYS             comma-separated API keys
  INVENTORY_API_KEYS_FILE        file with one API key per line, re-read when it changes
  OTEL_EXPORTER_OTLP_ENDPOINT    export traces over OTLP

Exit status: 0 after a graceful shutdown or -h; 2 when the settings are wrong
(a flag, an environment variable, REDIS_URL, a file they name); 1 when serving
fails (the address is taken, for example).
`
