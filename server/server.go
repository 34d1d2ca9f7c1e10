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
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/server/apikeys"
	"github.com/petinventory/petinventory/server/internal/logrepeat"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
	"github.com/redis/go-redis/v9"
)

// Run serves the inventory API as cfg says until ctx is done, then shuts
// down gracefully: it stops accepting, lets in-flight requests finish (up
// to 10 s) and returns nil. Wrong settings (no REDIS_URL, no API key) are
// a ConfigError, returned before it serves; a failure to serve (the
// address is taken) another error.
//
// It listens before it talks to Redis, so that a taken address fails at
// once, and seeds in the background: /readyz answers 503 until the seed
// (if any) is in and the store is ready.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	return run(ctx, cfg, log, nil)
}

// run is Run; ready, when not nil, is called with the API's listening
// address once the server accepts connections. Its body is the steps.
func run(ctx context.Context, cfg Config, log *slog.Logger, ready func(addr string)) error {
	s, err := settle(cfg) // settings: defaults, checks, keys, seed
	if err != nil {
		return badConfig(err)
	}
	st, err := openStore(s.cfg, log) // store: the client and redisstore
	if err != nil {
		return badConfig(err)
	}
	defer st.client.Close()
	tel, err := newTelemetry(ctx, s.cfg, st.client, st.store, log)
	if err != nil {
		return err
	}
	defer tel.shutdown(context.WithoutCancel(ctx)) // after serving: flush the last spans
	a, err := newAPI(s, st, tel, log)              // API: gated until the store is ready
	if err != nil {
		return err
	}
	lns, err := listen(s.cfg) // listeners: the API's, and the metrics' own when asked
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var background sync.WaitGroup
	defer background.Wait() // deferred before cancel, so it runs after it
	defer cancel()
	a.start(ctx, &background, s, st.store, log) // seeding, the key file
	lns.announce(log, s.cfg, st.name, ready)
	return serve(ctx, log, s.cfg, lns, a, tel) // shutdown: when ctx is done
}

// settled is what the settings give once checked: the configuration with
// its defaults, the keys and the seed.
type settled struct {
	cfg  Config
	ring *apikeys.KeyRing
	seed []inventory.Item
}

// settle applies cfg's defaults and checks everything that needs no
// network: the fields together, REDIS_URL and an API key present (both
// named when both are missing), the key file and the seed file read.
func settle(cfg Config) (settled, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return settled{}, err
	}
	var missing []error
	if cfg.RedisURL == "" {
		missing = append(missing, errors.New("REDIS_URL is required: the Redis to serve from (redis://host:6379/0; a Cluster or Sentinel URL); "+
			"to try the server without one, `go run ./examples/redis` in the repository starts an embedded Redis"))
	}
	keys, err := apikeys.Load(cfg.APIKeys, cfg.APIKeysFile)
	if err != nil {
		missing = append(missing, fileHint(err))
	}
	if len(missing) > 0 {
		return settled{}, errors.Join(missing...)
	}
	ring, err := apikeys.NewKeyRing(keys...)
	if err != nil {
		return settled{}, fmt.Errorf("API keys: %w", err)
	}
	seed, err := readSeed(cfg.Seed)
	if err != nil {
		return settled{}, fileHint(err)
	}
	return settled{cfg: cfg, ring: ring, seed: seed}, nil
}

// redisStore is the store the server serves from, on its client.
type redisStore struct {
	client redis.UniversalClient
	store  *redisstore.Store
	name   string // for the log, without credentials
}

// openStore connects to the Redis of cfg and makes the store on it; it
// sends nothing to Redis yet.
func openStore(cfg Config, log *slog.Logger) (redisStore, error) {
	client, rc, name, err := connect(cfg)
	if err != nil {
		return redisStore{}, err
	}
	// WithClientConfig lets the store's fixes name what only the URL
	// knows (the Sentinel master's name, the password file).
	// The store's faults name this server's settings, and the CA file in use.
	storeLog := slog.New(withCAFile(log.Handler(), cfg.RedisCAFile))
	opts := []redisstore.Option{redisstore.WithClientConfig(rc), redisstore.WithKeyPrefix(cfg.RedisPrefix), redisstore.WithLogger(storeLog)}
	if cfg.ReplicaAcks > 0 {
		opts = append(opts, redisstore.WithReplicaAcks(cfg.ReplicaAcks, cfg.ReplicaAckTimeout))
	}
	if cfg.AllowEviction {
		log.Warn("accepting a maxmemory-policy that may evict the store's keys (allkeys-*): under memory pressure Redis may drop entries of the inventory (-redis-allow-eviction)")
		opts = append(opts, redisstore.WithEvictionAllowed())
	}
	store, err := redisstore.New(client, opts...)
	if err != nil {
		client.Close()
		return redisStore{}, err
	}
	return redisStore{client: client, store: store, name: name}, nil
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

// readSeed returns what Config.Seed names: nothing, the demo inventory, or
// the items of a seed file.
func readSeed(seed string) ([]inventory.Item, error) {
	switch seed {
	case "":
		return nil, nil
	case "demo":
		return DemoInventory(), nil
	}
	return LoadSeed(seed)
}

// served is the API and what it needs while it serves.
type served struct {
	api    *inventory.API
	open   *atomic.Bool // the store is ready: the API's calls go through
	probes probes
}

// newAPI makes the API on the store, closed (503) until the store is ready.
func newAPI(s settled, st redisStore, tel *telemetry, log *slog.Logger) (served, error) {
	open := new(atomic.Bool)
	api, err := inventory.New(gatedStore{st.store, open}, inventory.WithAuthenticator(s.ring), inventory.WithLogger(log),
		inventory.WithStoreTimeout(s.cfg.StoreTimeout), inventory.WithObserver(tel.observer),
		inventory.WithMaxStaleness(s.cfg.MaxStaleness))
	if err != nil {
		return served{}, err
	}
	p := probes{store: st.store, timeout: s.cfg.StoreTimeout, log: log, seeded: new(atomic.Bool), state: new(readiness)}
	return served{api: api, open: open, probes: p}, nil
}

// start runs, until ctx is done, the seeding (which opens the API) and,
// with a key file, its watch.
func (a served) start(ctx context.Context, wg *sync.WaitGroup, s settled, store *redisstore.Store, log *slog.Logger) {
	wg.Go(func() { seedUntilDone(ctx, log, a.api, store, s.seed, s.cfg.StoreTimeout, a.open, a.probes.seeded) })
	if s.cfg.APIKeysFile != "" {
		keyLog := log.With("setting", "INVENTORY_API_KEYS_FILE")
		wg.Go(func() { apikeys.WatchFile(ctx, keyLog, s.cfg.APIKeysFile, keyFileInterval, s.ring) })
	}
}

// listeners are the server's: the API's, and the metrics' own (nil when
// /metrics is served on the API's).
type listeners struct {
	api, metrics net.Listener
}

func listen(cfg Config) (listeners, error) {
	api, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return listeners{}, err
	}
	if cfg.MetricsAddr == "" {
		return listeners{api: api}, nil
	}
	metrics, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		api.Close()
		return listeners{}, fmt.Errorf("metrics address (-metrics-addr): %w", err)
	}
	return listeners{api: api, metrics: metrics}, nil
}

func (l listeners) close() {
	l.api.Close()
	if l.metrics != nil {
		l.metrics.Close()
	}
}

// announce logs the start-up line, with a URL to try that a client on
// this machine can use, and calls ready (when not nil).
func (l listeners) announce(log *slog.Logger, cfg Config, storeName string, ready func(addr string)) {
	attrs := []any{"addr", l.api.Addr().String(), "framework", cfg.Framework, "store", storeName,
		"store_timeout", cfg.StoreTimeout, "replica_acks", cfg.ReplicaAcks, "max_staleness", cfg.MaxStaleness}
	if l.metrics != nil {
		attrs = append(attrs, "metrics_addr", l.metrics.Addr().String())
	}
	attrs = append(attrs, "try", fmt.Sprintf("curl -H 'Authorization: Bearer <key>' http://%s/v1/inventory", tryAddr(l.api.Addr())))
	log.Info("serving", attrs...)
	if ready != nil {
		ready(l.api.Addr().String())
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
func serve(ctx context.Context, log *slog.Logger, cfg Config, lns listeners, a served, tel *telemetry) error {
	withMetrics := lns.metrics == nil
	var api httpServer
	var err error
	if cfg.Framework == "fiber" {
		api, err = fiberServer(a, tel, withMetrics)
	} else {
		api, err = ginServer(log, a, tel, withMetrics)
	}
	if err != nil {
		lns.close()
		return err
	}
	api.ln = lns.api
	servers := []httpServer{api}
	if lns.metrics != nil {
		servers = append(servers, netHTTPServer(log, lns.metrics, tel.metricsMux()))
	}
	return serveAll(ctx, log, servers...)
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

// gatedStore is the store the API serves from: until open (the seed is in
// and the store is ready), the API's calls fail with ErrUnavailable, so
// that a client is answered 503 with Retry-After, never a list of a store
// not seeded yet ([]) nor 404 for a pet the seed would write. Seeding goes
// through PutIfEmpty, which is not gated.
type gatedStore struct {
	*redisstore.Store
	open *atomic.Bool
}

// errNotReady is the cause of the answers before the store is ready.
var errNotReady = errors.New("the inventory store is not seeded or not ready yet (see /readyz)")

func (g gatedStore) List(ctx context.Context) ([]inventory.Item, error) {
	if !g.open.Load() {
		return nil, inventory.Unavailable(errNotReady)
	}
	return g.Store.List(ctx)
}

func (g gatedStore) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if !g.open.Load() {
		return inventory.Changes{}, inventory.Unavailable(errNotReady)
	}
	return g.Store.ListChanges(ctx, since)
}

func (g gatedStore) SetQuantity(ctx context.Context, petID int64, quantity int) (inventory.Item, error) {
	if !g.open.Load() {
		return inventory.Item{}, inventory.Unavailable(errNotReady)
	}
	return g.Store.SetQuantity(ctx, petID, quantity)
}

// seedOnce seeds the store (items nil: no seed asked for) if it holds no entry, through the Service (the
// API's own checks; redisstore's PutIfEmpty makes it atomic), checks that
// the store is ready (every command it sends is permitted, see
// redisstore.Store.Ready), opens the API, then loads the inventory into
// the API's list cache (API.Preload), so that the first list after a start
// is not a full read of a large inventory. It returns nil when all is
// done, else why not (Redis did not answer, refused, or did not
// acknowledge the seed as asked).
func seedOnce(ctx context.Context, log *slog.Logger, api *inventory.API, store *redisstore.Store, items []inventory.Item, timeout time.Duration, open *atomic.Bool, announced *bool) error {
	// Redis writes a large seed in bounded chunks: give it the store
	// timeout once, and once more per 50 000 pets.
	sctx, cancel := context.WithTimeout(ctx, seedTimeout(timeout, len(items)))
	defer cancel()
	start := time.Now()
	wrote := false
	if items != nil { // nil: no seed asked for, nothing to write
		var err error
		if wrote, err = api.Service().PutIfEmpty(sctx, items...); err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
	}
	if !open.Load() && !*announced { // once: a retry while the store is not ready says it again otherwise
		*announced = true
		switch {
		case items == nil:
			log.Info("no seed (-seed): the store is served as it is")
		case len(items) == 0:
			log.Info("the seed is empty: nothing to write")
		case wrote:
			log.Info("seeded the empty store", "items", len(items), "took", time.Since(start).Round(time.Millisecond))
		default:
			log.Info("the store already holds entries: not seeding")
		}
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := store.Ready(rctx); err != nil {
		return fmt.Errorf("checking that the store can serve: %w", err)
	}
	open.Store(true)
	start = time.Now()
	if err := api.Preload(ctx); err != nil {
		return fmt.Errorf("loading the inventory: %w", err)
	}
	log.Info("loaded the inventory: ready", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// seedTimeout is how long a seed of n items may take.
func seedTimeout(storeTimeout time.Duration, n int) time.Duration {
	return storeTimeout * time.Duration(1+n/50_000)
}

// seedUntilDone tries seedOnce at once, then again, backing off to one try
// every 2 s, until it succeeds (and sets seeded) or ctx is done. A failure
// is logged at WARN, each distinct one once a minute at most (a
// logrepeat.Gate), except a configuration fault, which the store logs
// itself, once, with its fix.
func seedUntilDone(ctx context.Context, log *slog.Logger, api *inventory.API, store *redisstore.Store, items []inventory.Item, timeout time.Duration, open, seeded *atomic.Bool) {
	var repeats logrepeat.Gate
	announced := false
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		err := seedOnce(ctx, log, api, store, items, timeout, open, &announced)
		switch {
		case err == nil:
			seeded.Store(true)
			return
		case ctx.Err() != nil:
			return // shutting down
		case errors.Is(err, redisstore.ErrMisconfigured):
		default:
			if ok, held := repeats.Allow(err.Error(), time.Now()); ok && held > 0 {
				log.Warn("the store cannot serve yet; retrying in the background", "error", err, "repeated", held)
			} else if ok {
				log.Warn("the store cannot serve yet; retrying in the background", "error", err)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// probes are the routes outside /v1.
type probes struct {
	store   *redisstore.Store
	timeout time.Duration
	log     *slog.Logger
	seeded  *atomic.Bool // the seed is in (or the store held entries already), the store ready, the inventory loaded
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
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	err := p.store.Ready(ctx)
	msg := ""
	switch {
	case err != nil:
		msg = notReadyMessage(err)
	case !p.seeded.Load():
		msg = "the inventory store is not seeded yet"
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
// fault's own text (what is wrong and how to fix it, naming the store's Go
// API; the store's errors never hold a password) followed by the settings
// of this server that set that API, or, for Redis out of reach or an
// unexpected error, that alone: the addresses and network errors stay in
// the log.
func notReadyMessage(err error) string {
	var f *redisstore.ConfigFault
	if errors.As(err, &f) {
		if names := settingsFor(f.Option, f.Kind); names != "" {
			return inSettingNames(f.Error(), f.Kind) + " (inventory-server: " + names + ")"
		}
		return f.Error()
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
