package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/petinventory/petinventory/server/apikeys"
	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// setting is one row of the settings table: the flags, the environment
// variables and -h all come from it, and docs/OPERATING.md's table is
// checked against it.
type setting struct {
	flag  string // without the dash; "" when there is none
	env   string // "" when there is none
	field string // the Config field it sets
	// def is the default, as given to set ("" when the zero value is the
	// default); show is what -h says of a default that is not a value.
	def, show string
	doc       string
	set       func(c *Config, v string) error
	// option is the Go API of redisstore the setting feeds
	// (redisstore.OptionURL, …): a configuration fault the store logs
	// with that option gets the setting's name (settingnames.go).
	option string
	// fix is what the fix of such a fault tells to do with the setting,
	// when naming it is not enough; "": its name.
	fix string
	// secret settings never have their value in a message.
	secret bool
}

// settings is the table of every setting of the server.
var settings = []setting{
	{flag: "addr", env: "ADDR", field: "Addr", def: ":8080", doc: "listen address",
		set: func(c *Config, v string) error { c.Addr = v; return nil }},
	{flag: "framework", env: "INVENTORY_FRAMEWORK", field: "Framework", def: "gin", doc: "HTTP framework: gin or fiber",
		set: func(c *Config, v string) error { c.Framework = v; return nil }},
	{flag: "seed", env: "INVENTORY_SEED", field: "Seed", show: "nothing", option: redisstore.OptionInitialize, fix: seedWords,
		doc: "initializes a store never initialized (no marker) with: a JSON array of items (a file), demo for the 12 demo pets, or empty for no pets; on an initialized store it does nothing; unset, nothing (a store not initialized is not served)",
		set: func(c *Config, v string) error { c.Seed = v; return nil }},
	{flag: "init-only", env: "INVENTORY_INIT_ONLY", field: "InitOnly", def: "false",
		doc: "initialize the store with -seed (required) and exit: 0 once it is initialized (or already was) and can serve, 1 if not; listens on no port, needs no API key (a seed Job)",
		set: boolSetter(func(c *Config) *bool { return &c.InitOnly }, "initialize and exit", "serve")},
	{flag: "store-timeout", env: "INVENTORY_STORE_TIMEOUT", field: "StoreTimeout", def: "2s",
		doc: "deadline of each store call; past it the client gets 503", set: durationSetter(func(c *Config) *time.Duration { return &c.StoreTimeout })},
	{flag: "max-staleness", env: "INVENTORY_MAX_STALENESS", field: "MaxStaleness", def: "0s",
		doc: "let a list be up to this old (a state read at most this long ago, renewed in the background); Cache-Control: no-cache stays current; 0s: every list shows every update answered before it",
		set: durationSetter(func(c *Config) *time.Duration { return &c.MaxStaleness })},
	{flag: "stale-if-error", env: "INVENTORY_STALE_IF_ERROR", field: "StaleIfError", def: "0s",
		doc: "while the store is unavailable, answer lists from the last state it confirmed if at most this old (marked with Age and Cache-Status: petinventory; fwd=stale), never to Cache-Control: no-cache nor after the store vanished; every list declares Cache-Control: stale-if-error; whole seconds, above -max-staleness; 0s: lists get 503 as updates do",
		set: durationSetter(func(c *Config) *time.Duration { return &c.StaleIfError })},
	{env: "REDIS_URL", field: "RedisURL", option: redisstore.OptionURL, show: "none: required", doc: "the Redis: one node, Cluster or Sentinel URL (redisstore.ParseURL's forms)",
		set: func(c *Config, v string) error { c.RedisURL = v; return nil }},
	{flag: "redis-prefix", env: "INVENTORY_REDIS_PREFIX", field: "RedisPrefix", def: "inventory",
		doc: "prefix of the Redis keys, to keep several inventories in one Redis",
		set: func(c *Config, v string) error { c.RedisPrefix = v; return nil }},
	{flag: "replica-acks", env: "INVENTORY_REDIS_REPLICA_ACKS", field: "ReplicaAcks", def: "0",
		doc: "after each write, and before a list shows a new state, wait until this many replicas hold it (Redis WAIT); fewer in time is 503; 0: do not wait",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errors.New("not a whole number of replicas")
			}
			c.ReplicaAcks = n
			return nil
		}},
	{flag: "replica-ack-timeout", env: "INVENTORY_REDIS_REPLICA_ACK_TIMEOUT", field: "ReplicaAckTimeout", def: "500ms",
		doc: "how long a write or a list waits for the replicas' acknowledgements (below the store timeout)",
		set: durationSetter(func(c *Config) *time.Duration { return &c.ReplicaAckTimeout })},
	{flag: "redis-allow-eviction", env: "INVENTORY_REDIS_ALLOW_EVICTION", field: "AllowEviction", def: "false", option: redisstore.OptionEviction,
		doc: "accept a Redis whose maxmemory-policy may evict the store's keys (allkeys-*); otherwise it is not ready",
		set: boolSetter(func(c *Config) *bool { return &c.AllowEviction }, "allow", "refuse")},
	{env: "INVENTORY_REDIS_CA_FILE", field: "RedisCAFile", option: redisstore.OptionTLSFiles, show: "the system's trust store",
		doc: "PEM CA certificate(s) the Redis server's certificate is checked against (for Redis, instead of the system's); turns TLS on",
		set: func(c *Config, v string) error { c.RedisCAFile = v; return nil }},
	{env: "INVENTORY_REDIS_CERT_FILE", field: "RedisCertFile", option: redisstore.OptionTLSFiles, show: "none",
		doc: "PEM client certificate, for mutual TLS (with INVENTORY_REDIS_KEY_FILE); turns TLS on",
		set: func(c *Config, v string) error { c.RedisCertFile = v; return nil }},
	{env: "INVENTORY_REDIS_KEY_FILE", field: "RedisKeyFile", option: redisstore.OptionTLSFiles, show: "none", doc: "the client certificate's PEM private key",
		set: func(c *Config, v string) error { c.RedisKeyFile = v; return nil }},
	{env: "INVENTORY_REDIS_PASSWORD_FILE", field: "RedisPasswordFile", option: redisstore.OptionPasswordFile, show: "the password of REDIS_URL, if any",
		doc: "file holding the Redis password, read for every new connection (rotation without a restart)",
		set: func(c *Config, v string) error { c.RedisPasswordFile = v; return nil }},
	{env: "INVENTORY_API_KEYS", field: "APIKeys", secret: true, show: "none: this or the file is required",
		doc: "comma-separated API keys (make one with: openssl rand -hex 32)",
		set: func(c *Config, v string) error {
			keys, err := apikeys.ParseList(v)
			c.APIKeys = keys
			return err
		}},
	{env: "INVENTORY_API_KEYS_FILE", field: "APIKeysFile", show: "none: this or the keys are required",
		doc: "file with one API key per line (# comments), re-read when it changes",
		set: func(c *Config, v string) error { c.APIKeysFile = v; return nil }},
	{flag: "metrics-addr", env: "INVENTORY_METRICS_ADDR", field: "MetricsAddr", show: "the API's address",
		doc: "serve GET /metrics on this address of its own (plain HTTP) instead of the API's",
		set: func(c *Config, v string) error { c.MetricsAddr = v; return nil }},
	{env: "OTEL_EXPORTER_OTLP_ENDPOINT", field: "OTLPEndpoint", show: "no tracing",
		doc: "export traces over OTLP/HTTP to this base URL (the other OTEL_EXPORTER_OTLP_* variables apply)",
		set: func(c *Config, v string) error { c.OTLPEndpoint = v; return nil }},
	{env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", field: "OTLPTracesEndpoint", show: "none",
		doc: "the full URL to export traces to; wins over OTEL_EXPORTER_OTLP_ENDPOINT",
		set: func(c *Config, v string) error { c.OTLPTracesEndpoint = v; return nil }},
}

func durationSetter(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return errors.New("not a duration such as 2s or 500ms")
		}
		*field(c) = d
		return nil
	}
}

// boolSetter sets a boolean field; its error says what true and false
// mean for the setting.
func boolSetter(field func(*Config) *bool, yes, no string) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want 1 or true (%s), 0 or false (%s)", yes, no)
		}
		*field(c) = b
		return nil
	}
}

// seedWords is what a fix says to initialize the store, the seed
// setting's fix: an operator's explicit act, run once, that exits (a
// server's -seed acts at its start only, and a store that vanished under
// running servers needs no restart of them).
const seedWords = "inventory-server -init-only -seed FILE (or -seed demo, or -seed empty), run once"

// name is how messages name s: its flag, else its environment variable.
func (s setting) name() string {
	if s.flag != "" {
		return "-" + s.flag
	}
	return s.env
}

// defaultText is the default as -h and docs/OPERATING.md show it.
func (s setting) defaultText() string {
	if s.def != "" {
		return s.def
	}
	return s.show
}

// value is s's field in c.
func (s setting) value(c *Config) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByName(s.field)
}

// isZero reports whether s's field in c holds its zero value.
func (s setting) isZero(c *Config) bool { return s.value(c).IsZero() }

// flagValue is a setting as a flag.Value.
type flagValue struct {
	s   setting
	cfg *Config
}

func (f flagValue) String() string {
	if f.cfg == nil {
		return ""
	}
	return fmt.Sprint(f.s.value(f.cfg).Interface())
}

func (f flagValue) Set(v string) error { return f.s.set(f.cfg, v) }

// IsBoolFlag lets a setting of a boolean field be given as -name alone.
func (f flagValue) IsBoolFlag() bool {
	field, _ := reflect.TypeFor[Config]().FieldByName(f.s.field)
	return field.Type.Kind() == reflect.Bool
}

// ErrVersion is Parse's error for -version: the command prints
// BuildInfo and exits 0 (ExitStatus returns ExitOK for it).
var ErrVersion = errors.New("-version asked for")

// Parse reads the settings: each one's default, then its environment
// variable (through getenv) when set, then its flag in args (the command
// line without the program's name), which wins. -h writes the table to
// usage and returns flag.ErrHelp; -version returns ErrVersion; any other
// error is a ConfigError naming the setting.
func Parse(name string, args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	cfg := Config{}.withDefaults()
	for _, s := range settings {
		if s.env == "" {
			continue
		}
		if v := getenv(s.env); v != "" {
			if err := s.set(&cfg, v); err != nil {
				if s.secret {
					return Config{}, badConfig(fmt.Errorf("%s: %v", s.env, err))
				}
				return Config{}, badConfig(fmt.Errorf("%s=%q: %v", s.env, v, err))
			}
		}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(usage)
	for _, s := range settings {
		if s.flag != "" {
			fs.Var(flagValue{s, &cfg}, s.flag, s.doc)
		}
	}
	version := fs.Bool("version", false, "print the version, VCS revision and Go version, and exit")
	fs.Usage = func() { writeUsage(fs.Output(), name) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, badConfig(err)
	}
	if *version {
		return Config{}, ErrVersion
	}
	if fs.NArg() > 0 {
		return Config{}, badConfig(fmt.Errorf("unexpected argument %q; settings are flags and environment variables (-h lists them)", fs.Arg(0)))
	}
	if err := cfg.validate(); err != nil {
		return Config{}, badConfig(err)
	}
	return cfg, nil
}

// writeUsage writes -h: the settings table and the exit statuses.
func writeUsage(w io.Writer, name string) {
	fmt.Fprintf(w, "Usage: %s [flags]\n\nSettings (a flag wins over its environment variable):\n\n", name)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  FLAG\tENVIRONMENT\tDEFAULT\tMEANING")
	for _, s := range settings {
		fl, env := "-", "-"
		if s.flag != "" {
			fl = "-" + s.flag
		}
		if s.env != "" {
			env = s.env
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", fl, env, s.defaultText(), s.doc)
	}
	_ = tw.Flush()
	fmt.Fprint(w, "\n  -version: print the version, VCS revision and Go version, and exit.\n")
	fmt.Fprint(w, exitStatusText)
}

// exitStatusText ends -h.
const exitStatusText = `
REDIS_URL and an API key (INVENTORY_API_KEYS or INVENTORY_API_KEYS_FILE;
make one with: openssl rand -hex 32) are required: without them the server
does not start. A store is served only once initialized: -seed FILE,
-seed demo or -seed empty initializes one that never was, once.
-init-only -seed FILE does that and exits (no API key needed): a seed Job.

Exit status: 0 after a graceful shutdown (SIGINT, SIGTERM), -h or -version,
or once -init-only has the store initialized; 2 when the settings are wrong
(a flag, an environment variable, REDIS_URL, no API key, a file they name,
-init-only without -seed); 1 when serving fails (the address is taken) or
-init-only cannot initialize the store (Redis out of reach, refused).
`
