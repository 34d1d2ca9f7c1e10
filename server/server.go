package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/server/apikeys"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
	"github.com/redis/go-redis/v9"
)

// Run serves the inventory API as cfg says until ctx is done, then shuts
// down gracefully: it stops accepting, lets in-flight requests finish (up
// to 10 s) and returns nil. Wrong settings (no REDIS_URL, no API key) are
// a ConfigError, returned before it serves; a failure to serve (the
// address is taken) another error. With cfg.InitOnly it serves nothing:
// it initializes the store with cfg.Seed, once, and returns.
//
// It listens before it talks to Redis, so that a taken address fails at
// once, and seeds in the background: /readyz answers 503 until the seed
// (if any) is in and the store is ready.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	return run(ctx, cfg, log, nil)
}

// run is Run; ready, when not nil, is called with the API's listening
// address once the server accepts connections.
func run(ctx context.Context, cfg Config, log *slog.Logger, ready func(addr string)) error {
	l := &lifecycle{log: log, ready: ready}
	return l.run(ctx, cfg)
}

// lifecycle is one run of the server, from its settings to its shutdown:
// each step is a method, run in the order lifecycle.run calls them, and
// each leaves what the next ones need in the lifecycle's fields.
type lifecycle struct {
	log   *slog.Logger
	ready func(addr string) // called with the API's address once it accepts; may be nil

	settled            // settings: the configuration, the keys, the seed
	st      redisStore // the store and its client
	tel     *telemetry // metrics and traces
	served  served     // the API, its gate and the probes
	lns     listeners  // the API's listener, and the metrics' own
}

// run is the steps, in order; it returns when the server has shut down.
func (l *lifecycle) run(ctx context.Context, cfg Config) error {
	if err := l.settle(cfg); err != nil { // settings: defaults, checks, keys, seed
		return badConfig(err)
	}
	if err := l.openStore(); err != nil { // store: the client and redisstore
		return badConfig(err)
	}
	defer l.st.client.Close()
	if l.cfg.InitOnly { // -init-only: the store initialized, then exit
		return l.initOnly(ctx)
	}
	if err := l.startTelemetry(ctx); err != nil {
		return err
	}
	defer l.tel.shutdown(context.WithoutCancel(ctx)) // after serving: flush the last spans
	if err := l.newAPI(); err != nil {               // API: gated until the store is ready
		return err
	}
	if err := l.listen(); err != nil { // listeners: the API's, and the metrics' own when asked
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var background sync.WaitGroup
	defer background.Wait() // deferred before cancel, so it runs after it
	defer cancel()
	l.start(ctx, &background) // the store's initialization and readiness, the key file
	l.announce()
	return l.serve(ctx) // shutdown: when ctx is done
}

// settled is what the settings give once checked: the configuration with
// its defaults, the keys and the seed.
type settled struct {
	cfg  Config
	ring *apikeys.KeyRing
	// seed is what -seed initializes a store without its marker with
	// (empty for -seed empty, and without -seed).
	seed []inventory.Item
}

// settle applies cfg's defaults and checks everything that needs no
// network: the fields together, REDIS_URL and an API key present (both
// named when both are missing), the key file and the seed file read.
// -init-only serves nothing: it needs no key, and reads none.
func (l *lifecycle) settle(cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	var missing []error
	if cfg.RedisURL == "" {
		missing = append(missing, errors.New("REDIS_URL is required: the Redis to serve from (redis://host:6379/0; a Cluster or Sentinel URL); "+
			"to try the server without one, `go run ./examples/redis` in the repository starts an embedded Redis"))
	}
	var ring *apikeys.KeyRing
	if !cfg.InitOnly {
		keys, err := apikeys.Load(cfg.APIKeys, cfg.APIKeysFile)
		if err != nil {
			missing = append(missing, fileHint(err))
		} else if ring, err = apikeys.NewKeyRing(keys...); err != nil {
			return fmt.Errorf("API keys: %w", err)
		}
	}
	if len(missing) > 0 {
		return errors.Join(missing...)
	}
	seed, err := readSeed(cfg.Seed)
	if err != nil {
		return fileHint(err)
	}
	l.settled = settled{cfg: cfg, ring: ring, seed: seed}
	return nil
}

// redisStore is the store the server serves from, on its client.
type redisStore struct {
	client redis.UniversalClient
	store  *redisstore.Store
	name   string // for the log, without credentials
}

// openStore connects to the Redis of the settings and makes the store on
// it; it sends nothing to Redis yet. The store serves only an initialized
// inventory (WithRequireInitialized), and words its faults in this
// server's settings (WithSettingNames).
func (l *lifecycle) openStore() error {
	cfg := l.cfg
	client, rc, name, err := connect(cfg)
	if err != nil {
		return err
	}
	// WithClientConfig lets the store's fixes name what only the URL
	// knows (the Sentinel master's name, the password file).
	// The store's faults name this server's settings, and the CA file in use.
	storeLog := slog.New(withCAFile(l.log.Handler(), cfg.RedisCAFile))
	opts := []redisstore.Option{redisstore.WithClientConfig(rc), redisstore.WithKeyPrefix(cfg.RedisPrefix), redisstore.WithLogger(storeLog),
		redisstore.WithRequireInitialized(), redisstore.WithSettingNames(settingWords)}
	if cfg.ReplicaAcks > 0 {
		opts = append(opts, redisstore.WithReplicaAcks(cfg.ReplicaAcks, cfg.ReplicaAckTimeout))
	}
	if cfg.AllowEviction {
		l.log.Warn("accepting a maxmemory-policy that may evict the store's keys (allkeys-*): under memory pressure Redis may drop entries of the inventory (-redis-allow-eviction)")
		opts = append(opts, redisstore.WithEvictionAllowed())
	}
	store, err := redisstore.New(client, opts...)
	if err != nil {
		client.Close()
		return err
	}
	l.st = redisStore{client: client, store: store, name: name}
	return nil
}

// startTelemetry starts the metrics and, when asked, the traces.
func (l *lifecycle) startTelemetry(ctx context.Context) error {
	tel, err := newTelemetry(ctx, l.cfg, l.st.client, l.st.store, l.log)
	if err != nil {
		return err
	}
	l.tel = tel
	return nil
}

// connect returns a client on the Redis that cfg.RedisURL names (one
// node, Cluster or Sentinel: see redisstore.ParseURL), with the TLS and
// password files of cfg. storeName describes it for the log, without
// credentials.
func connect(cfg Config) (client redis.UniversalClient, rc *redisstore.Config, storeName string, err error) {
	rc, err = redisstore.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, nil, "", fmt.Errorf("REDIS_URL: %w", err)
	}
	if cfg.RedisCAFile != "" || cfg.RedisCertFile != "" || cfg.RedisKeyFile != "" {
		if err := rc.LoadTLSFiles(cfg.RedisCAFile, cfg.RedisCertFile, cfg.RedisKeyFile); err != nil {
			return nil, nil, "", fileHint(fmt.Errorf("INVENTORY_REDIS_CA_FILE, _CERT_FILE, _KEY_FILE: %w", err))
		}
	}
	if cfg.RedisPasswordFile != "" {
		if err := rc.UsePasswordFile(cfg.RedisPasswordFile); err != nil {
			return nil, nil, "", fileHint(fmt.Errorf("INVENTORY_REDIS_PASSWORD_FILE: %w", err))
		}
	}
	return rc.NewClient(), rc, "redis " + rc.String(), nil
}

// imageUID is the user the image (scripts/release/image.sh) runs as.
const imageUID = 65532

// fileHint adds to a file's permission error who this process is, and
// that the image runs as uid 65532: a secret mounted readable by root
// only is the usual cause.
func fileHint(err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w (this process runs as uid %d; the image runs as uid %d, nonroot: make the file readable by that user, "+
		"e.g. a Kubernetes secret volume's defaultMode 0440 with the pod's securityContext.fsGroup %d)", err, os.Getuid(), imageUID, imageUID)
}

// readSeed returns what Config.Seed names: nothing, no pet (SeedEmpty),
// the demo inventory (SeedDemo), or the items of a seed file.
func readSeed(seed string) ([]inventory.Item, error) {
	switch seed {
	case "":
		return nil, nil
	case SeedEmpty:
		return []inventory.Item{}, nil
	case SeedDemo:
		return DemoInventory(), nil
	}
	return LoadSeed(seed)
}

// served is the API and what it needs while it serves.
type served struct {
	api    *inventory.API
	gate   *gatedStore // closed (503) until the store is ready
	probes probes
}

// newAPI makes the API on the store, behind its gate: closed (503) until
// the store is initialized and ready.
func (l *lifecycle) newAPI() error {
	gate := newGate(l.st.store)
	api, err := inventory.New(gate, inventory.WithAuthenticator(l.ring), inventory.WithLogger(l.log),
		inventory.WithStoreTimeout(l.cfg.StoreTimeout), inventory.WithObserver(l.tel.observer),
		inventory.WithMaxStaleness(l.cfg.MaxStaleness), inventory.WithStaleIfError(l.cfg.StaleIfError))
	if err != nil {
		return err
	}
	p := probes{store: l.st.store, timeout: l.cfg.StoreTimeout, log: l.log, boot: new(bootState), state: new(readiness)}
	p.boot.seeding.Store(l.cfg.Seed != "")
	l.served = served{api: api, gate: gate, probes: p}
	return nil
}

// start runs, until ctx is done, the store's boot (initialization when
// -seed asks, readiness, which opens the gate) and, with a key file, its
// watch.
func (l *lifecycle) start(ctx context.Context, wg *sync.WaitGroup) {
	boot := &storeBoot{storeInit: storeInit{cfg: l.cfg, seed: l.seed, store: l.st.store, log: l.log}, served: l.served, state: l.served.probes.boot}
	wg.Go(func() { boot.untilDone(ctx) })
	if l.cfg.APIKeysFile != "" {
		keyLog := l.log.With("setting", "INVENTORY_API_KEYS_FILE")
		wg.Go(func() { apikeys.WatchFile(ctx, keyLog, l.cfg.APIKeysFile, keyFileInterval, l.ring) })
	}
}

// listeners are the server's: the API's, and the metrics' own (nil when
// /metrics is served on the API's).
type listeners struct {
	api, metrics net.Listener
}

// listen opens the listeners.
func (l *lifecycle) listen() error {
	api, err := net.Listen("tcp", l.cfg.Addr)
	if err != nil {
		return err
	}
	if l.cfg.MetricsAddr == "" {
		l.lns = listeners{api: api}
		return nil
	}
	metrics, err := net.Listen("tcp", l.cfg.MetricsAddr)
	if err != nil {
		api.Close()
		return fmt.Errorf("metrics address (-metrics-addr): %w", err)
	}
	l.lns = listeners{api: api, metrics: metrics}
	return nil
}

func (l listeners) close() {
	l.api.Close()
	if l.metrics != nil {
		l.metrics.Close()
	}
}

// announce logs the start-up line, with a URL to try that a client on
// this machine can use, and calls ready (when not nil).
func (l *lifecycle) announce() {
	cfg, lns := l.cfg, l.lns
	attrs := []any{"addr", lns.api.Addr().String(), "framework", cfg.Framework, "store", l.st.name,
		"store_timeout", cfg.StoreTimeout, "replica_acks", cfg.ReplicaAcks, "max_staleness", cfg.MaxStaleness, "stale_if_error", cfg.StaleIfError}
	if lns.metrics != nil {
		attrs = append(attrs, "metrics_addr", lns.metrics.Addr().String())
	}
	attrs = append(attrs, "try", fmt.Sprintf("curl -H 'Authorization: Bearer <key>' http://%s/v1/inventory", tryAddr(lns.api.Addr())))
	l.log.Info("serving", attrs...)
	if l.ready != nil {
		l.ready(lns.api.Addr().String())
	}
}

// tryAddr is addr as a client on this machine dials it: an unspecified
// host (":8080", "[::]:8080", "0.0.0.0:8080") is localhost.
func tryAddr(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// serve serves the API (and /metrics on its own listener, when there is
// one) until ctx is done, then shuts down gracefully.
func (l *lifecycle) serve(ctx context.Context) error {
	lns, a, tel := l.lns, l.served, l.tel
	withMetrics := lns.metrics == nil
	var api httpServer
	var err error
	if l.cfg.Framework == "fiber" {
		api, err = fiberServer(a, tel, withMetrics)
	} else {
		api, err = ginServer(l.log, a, tel, withMetrics)
	}
	if err != nil {
		lns.close()
		return err
	}
	api.ln = lns.api
	servers := []httpServer{api}
	if lns.metrics != nil {
		servers = append(servers, netHTTPServer(l.log, lns.metrics, tel.metricsMux()))
	}
	return serveAll(ctx, l.log, servers...)
}

// fiberServer is the API on Fiber, with the probes (and /metrics).
func fiberServer(a served, tel *telemetry, withMetrics bool) (httpServer, error) {
	app := newFiberApp()
	tel.mountFiber(app, withMetrics)
	for path, h := range a.probes.routes() {
		app.Get(path, func(c *fiber.Ctx) error {
			status, ctype, body := h(c.UserContext())
			c.Set("Content-Type", ctype)
			c.Set("Cache-Control", "no-store")
			return c.Status(status).Send(body)
		})
	}
	if err := inventoryfiber.Register(app.Group("/v1"), a.api); err != nil {
		return httpServer{}, err
	}
	// Methods fiber routes nowhere (PROPFIND, a lowercase get) get the API's 405.
	if err := inventoryfiber.ServeOtherMethods(app, a.api, "/v1"); err != nil {
		return httpServer{}, err
	}
	return fiberHTTPServer(app), nil
}

// ginServer is the API on Gin, with the probes (and /metrics).
func ginServer(log *slog.Logger, a served, tel *telemetry, withMetrics bool) (httpServer, error) {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery())
	tel.mountGin(engine, withMetrics)
	for path, h := range a.probes.routes() {
		engine.GET(path, func(c *gin.Context) {
			status, ctype, body := h(c.Request.Context())
			c.Header("Cache-Control", "no-store")
			c.Data(status, ctype, body)
		})
	}
	if err := inventorygin.Register(engine.Group("/v1"), a.api); err != nil {
		return httpServer{}, err
	}
	// Methods gin routes nowhere (PROPFIND, a lowercase get) get the API's 405.
	noRoute, err := inventorygin.NoRoute(a.api, "/v1")
	if err != nil {
		return httpServer{}, err
	}
	engine.NoRoute(noRoute)
	return netHTTPServer(log, nil, engine), nil
}

// keyFileInterval is how often INVENTORY_API_KEYS_FILE is read again.
const keyFileInterval = time.Second

// probes are the routes outside /v1.
type probes struct {
	store   *redisstore.Store
	timeout time.Duration
	log     *slog.Logger
	boot    *bootState // how far the store's boot went
	state   *readiness
}

type probeFunc func(ctx context.Context) (status int, contentType string, body []byte)

func (p probes) routes() map[string]probeFunc {
	return map[string]probeFunc{
		"/healthz":      p.healthz,
		"/readyz":       p.readyz,
		"/openapi.yaml": openAPI,
	}
}

// healthz: the process is alive and serving; it does not look at Redis,
// so that an orchestrator never restarts replicas for a Redis outage.
func (p probes) healthz(context.Context) (int, string, []byte) {
	return http.StatusOK, "application/json", []byte(`{"status":"ok"}`)
}

// readyz: the store can serve (redisstore's Ready exercises every command
// the store sends on its own keys, so a Cluster node that does not own
// them, a sentinel's port, a replica, a user the ACL refuses a command or
// an evicting Redis is not ready), the seed is in and the inventory is
// loaded; an orchestrator stops routing traffic here while it fails. Its
// 503 body says why: a configuration fault with its fix, or that Redis
// cannot be reached, or that the seed is not in yet. A change of
// readiness is logged once.
func (p probes) readyz(ctx context.Context) (int, string, []byte) {
	var msg string
	if p.boot.seeding.Load() {
		// -seed is initializing the store: a Ready now would meet a store
		// not initialized yet, a fault that is not one. Say what the
		// boot's last try met, if anything.
		msg = "the inventory store is being initialized (-seed)"
		if err := p.boot.lastErr(); err != nil {
			msg = notReadyMessage(err)
		}
	} else {
		ctx, cancel := context.WithTimeout(ctx, p.timeout)
		defer cancel()
		err := p.store.Ready(ctx)
		switch {
		case err != nil:
			msg = notReadyMessage(err)
		case !p.boot.seeded.Load():
			msg = "the inventory store is not seeded yet"
		}
	}
	p.state.record(ctx, p.log, msg)
	if msg != "" {
		var body bytes.Buffer
		enc := json.NewEncoder(&body)
		enc.SetEscapeHTML(false) // the fixes hold "<user>": keep them readable
		_ = enc.Encode(struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		}{"unavailable", msg})
		return http.StatusServiceUnavailable, "application/json", bytes.TrimSuffix(body.Bytes(), []byte("\n"))
	}
	return http.StatusOK, "application/json", []byte(`{"status":"ready"}`)
}

// notReadyMessage is what /readyz says of a failed Ready: a configuration
// fault's own text, or a store's without its marker (not initialized, or
// vanished): what is wrong and how to fix it, worded in this server's
// settings by settingWords (the store's errors never hold a password),
// followed by the settings of this server that fix it; or, for Redis out
// of reach or an unexpected error, that alone: the addresses and network
// errors stay in the log.
func notReadyMessage(err error) string {
	var f *redisstore.ConfigFault
	if errors.As(err, &f) {
		if names := settingsFor(f.Option, f.Kind); names != "" {
			return f.Error() + " (inventory-server: " + names + ")"
		}
		return f.Error()
	}
	if nf, ok := errors.AsType[*redisstore.InitFault](err); ok {
		return nf.Error() + " (inventory-server: " + settingsFor(redisstore.OptionInitialize, nf.Kind) + ")"
	}
	if errors.Is(err, redisstore.ErrMisconfigured) {
		return err.Error()
	}
	if errors.Is(err, inventory.ErrUnavailable) {
		return "the inventory store cannot serve: Redis cannot be reached, timed out, or refuses work for now"
	}
	return "the inventory store cannot serve; the server's log says why"
}

// readiness is the last readiness /readyz answered, to log its changes
// rather than every probe.
type readiness struct {
	mu   sync.Mutex
	last *string // nil before the first probe; "" when ready
}

func (r *readiness) record(ctx context.Context, log *slog.Logger, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != nil && *r.last == msg {
		return
	}
	switch {
	case msg == "" && r.last != nil:
		log.InfoContext(ctx, "ready again: the store can serve")
	case msg != "" && (r.last == nil || *r.last == ""):
		log.WarnContext(ctx, "not ready", "cause", msg)
	}
	r.last = &msg
}

func openAPI(context.Context) (int, string, []byte) {
	return http.StatusOK, "application/yaml", inventory.OpenAPI()
}
