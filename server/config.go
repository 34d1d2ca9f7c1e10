package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/petinventory/petinventory/server/apikeys"
)

// Config is the server's configuration. A zero field takes its default,
// given in its comment; inventory-server sets each field from a flag or an
// environment variable (settings.go holds the table, and `-h` prints it).
type Config struct {
	// Addr is the address to listen on.
	// Default: ":8080".
	Addr string
	// Framework is the HTTP framework: "gin" or "fiber".
	// Default: "gin".
	Framework string
	// Seed initializes a store that was never initialized (it has no
	// initialization marker, see redisstore.Store.Initialize) with: the
	// path of a JSON array of items (LoadSeed), SeedDemo ("demo") for the
	// demo inventory (DemoInventory; a file of that name is "./demo"), or
	// SeedEmpty ("empty") for a store that starts with no pets. On an
	// initialized store it does nothing (logged); a store seeded before
	// the marker existed (entries, no marker) is adopted: its marker is
	// written, its entries kept.
	// Default: "" (initialize nothing: the server serves only a store
	// already initialized, and is not ready until then).
	Seed string
	// InitOnly makes Run initialize the store with Seed (required: Run
	// refuses InitOnly without it) and return, without listening: nil once
	// the store is initialized (or already was, or a store seeded before
	// the marker is adopted) and can serve, else why not. No API key is
	// needed. It is a seed Job's mode (deploy/kubernetes/seed/job-seed.yaml).
	// Default: false (serve).
	InitOnly bool
	// StoreTimeout is the deadline of each store call; past it the client
	// gets 503.
	// Default: 2s.
	StoreTimeout time.Duration
	// MaxStaleness lets a list be up to that old: it is answered from a
	// state read at most MaxStaleness ago, renewed in the background while
	// lists come, so that Redis sees about two list reads per MaxStaleness
	// from this process (inventory.WithMaxStaleness); a list with
	// Cache-Control: no-cache reads Redis.
	// Default: 0s (every list shows every update answered before it).
	MaxStaleness time.Duration
	// StaleIfError lets lists be answered through a store outage (Redis
	// down, paused, failing over) from the last state the store
	// confirmed, when it is at most StaleIfError old, marked stale (Age,
	// Cache-Status); never to Cache-Control: no-cache, never after the
	// store vanished (inventory.WithStaleIfError). Every list then
	// declares Cache-Control: stale-if-error. A whole number of seconds,
	// longer than MaxStaleness.
	// Default: 0s (off: lists get 503 while the store is unavailable).
	StaleIfError time.Duration
	// RedisURL is the Redis: one node, Cluster or Sentinel, in the forms
	// of redisstore.ParseURL. Required.
	// Default: "" (none: Run refuses to start).
	RedisURL string
	// RedisPrefix is the prefix of the store's Redis keys, to keep several
	// inventories in one Redis.
	// Default: "inventory".
	RedisPrefix string
	// ReplicaAcks, when positive, makes each write wait until that many
	// replicas acknowledge it (Redis WAIT); fewer in time is 503.
	// Default: 0 (do not wait).
	ReplicaAcks int
	// ReplicaAckTimeout is how long a write waits for those
	// acknowledgements; it must be below StoreTimeout.
	// Default: 500ms.
	ReplicaAckTimeout time.Duration
	// AllowEviction accepts a Redis whose maxmemory-policy may evict the
	// store's keys (allkeys-*); otherwise such a Redis is not ready.
	// Default: false.
	AllowEviction bool
	// RedisCAFile is a PEM file of the CA(s) that signed the Redis
	// server's certificate (a private CA): trusted for Redis instead of
	// the system's trust store. Setting it turns TLS on, as rediss:// does.
	// Default: "" (the system's trust store).
	RedisCAFile string
	// RedisCertFile and RedisKeyFile are a PEM client certificate and its
	// key, for a Redis that asks for one (mutual TLS); set both or neither.
	// Default: "" (no client certificate).
	RedisCertFile string
	// RedisKeyFile is RedisCertFile's private key.
	// Default: "".
	RedisKeyFile string
	// RedisPasswordFile is a file holding the Redis password, read again
	// for every new connection: a rotated password is used once the old
	// connections close, without a restart.
	// Default: "" (the password of RedisURL, if any).
	RedisPasswordFile string
	// APIKeys are the API keys the server accepts; this or APIKeysFile
	// is required (apikeys.Load).
	// Default: none (Run refuses to start without a key).
	APIKeys []string
	// APIKeysFile is a file with one API key per line, re-read when it
	// changes (apikeys.WatchFile); not with APIKeys.
	// Default: "" (no key file).
	APIKeysFile string
	// MetricsAddr, when set, is an address of its own that GET /metrics
	// is served on (plain HTTP), instead of the API's.
	// Default: "" (on the API's address).
	MetricsAddr string
	// OTLPEndpoint, when set, exports traces over OTLP/HTTP to this base
	// URL (/v1/traces is added), as OTEL_EXPORTER_OTLP_ENDPOINT does; the
	// other OTEL_EXPORTER_OTLP_* variables (headers, TLS, timeout) apply.
	// Default: "" (no tracing).
	OTLPEndpoint string
	// OTLPTracesEndpoint is the full URL traces are exported to; it wins
	// over OTLPEndpoint, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT does.
	// Default: "".
	OTLPTracesEndpoint string
}

// withDefaults returns c with each zero field set to its default (the
// settings table's).
func (c Config) withDefaults() Config {
	for _, s := range settings {
		if s.def != "" && s.isZero(&c) {
			if err := s.set(&c, s.def); err != nil {
				panic("server: the default of " + s.name() + ": " + err.Error())
			}
		}
	}
	return c
}

// validate checks what the fields say together; it runs on a Config with
// its defaults.
func (c Config) validate() error {
	switch {
	case c.Framework != "gin" && c.Framework != "fiber":
		return fmt.Errorf("framework %q: want gin or fiber", c.Framework)
	case c.StoreTimeout <= 0:
		return fmt.Errorf("store timeout %v: must be positive", c.StoreTimeout)
	case c.MaxStaleness < 0:
		return fmt.Errorf("max staleness %v: must not be negative", c.MaxStaleness)
	case c.StaleIfError < 0:
		return fmt.Errorf("stale-if-error %v: must not be negative (0s turns it off)", c.StaleIfError)
	case c.StaleIfError%time.Second != 0:
		return fmt.Errorf("stale-if-error %v: must be a whole number of seconds, as Age and Cache-Control's stale-if-error count it", c.StaleIfError)
	case c.StaleIfError > 0 && c.StaleIfError <= c.MaxStaleness:
		return fmt.Errorf("stale-if-error %v: must be longer than -max-staleness (%v), which already answers lists from a state that old", c.StaleIfError, c.MaxStaleness)
	case c.ReplicaAcks < 0 || c.ReplicaAcks > 16:
		return fmt.Errorf("replica acks %d: must be between 0 and 16", c.ReplicaAcks)
	case c.ReplicaAcks > 0 && (c.ReplicaAckTimeout < time.Millisecond || c.ReplicaAckTimeout >= c.StoreTimeout):
		return fmt.Errorf("replica ack timeout %v: must be at least 1ms and below the store timeout (%v), which bounds the whole write", c.ReplicaAckTimeout, c.StoreTimeout)
	case c.InitOnly && c.Seed == "":
		return errors.New("-init-only initializes the store with a seed and exits, and there is none: add -seed FILE (a JSON array of items), -seed demo or -seed empty (or INVENTORY_SEED)")
	case (c.RedisCertFile == "") != (c.RedisKeyFile == ""):
		return errors.New("INVENTORY_REDIS_CERT_FILE and INVENTORY_REDIS_KEY_FILE go together (a client certificate and its key): set both or neither")
	case len(c.APIKeys) > 0 && c.APIKeysFile != "":
		_, err := apikeys.Load(c.APIKeys, c.APIKeysFile) // its error for both, before any file is read
		return err
	}
	return nil
}

// A ConfigError is an error of the settings (a flag, an environment
// variable, REDIS_URL, a file they name, an API key), found before the
// server serves: the command exits with status 2 (ExitStatus).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// badConfig wraps a non-nil err as a ConfigError.
func badConfig(err error) error {
	if err == nil {
		return nil
	}
	return ConfigError{err}
}
