package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// to 10 s) and returns nil. Wrong settings are a ConfigError, returned
// before it serves; a failure to serve (the address is taken) another
// error. A generated API key is written to standard error.
//
// It listens before it talks to Redis, so that a taken address fails at
// once, and seeds in the background: /readyz answers 503 until the seed
// is in and the store is ready.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	return run(ctx, cfg, log, os.Stderr, nil)
}

// run is Run writing the generated API key, if any, to out; ready, when
// not nil, is called with the listening address once the server accepts
// connections.
func run(ctx context.Context, cfg Config, log *slog.Logger, out io.Writer, ready func(addr string)) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return badConfig(err)
	}
	if cfg.RedisURL == "" {
		return badConfig(errors.New("REDIS_URL is required: the Redis to serve from (redis://host:6379/0; a Cluster or Sentinel URL); " +
			"to try the server without one, `go run ./examples/redis` in the repository starts an embedded Redis"))
	}
	seed := DemoInventory()
	if cfg.SeedFile != "" {
		var err error
		if seed, err = LoadSeed(cfg.SeedFile); err != nil {
			return badConfig(err)
		}
	}
	keys, err := apiKeys(cfg, out)
	if err != nil {
		return badConfig(err)
	}
	ring, err := apikeys.NewKeyRing(keys...)
	if err != nil {
		return badConfig(fmt.Errorf("API keys: %w", err))
	}

	client, rc, storeName, err := connect(cfg)
	if err != nil {
		return badConfig(err)
	}
	defer client.Close()
	// WithClientConfig lets the store's fixes name what only the URL
	// knows (the Sentinel master's name, the password file).
	opts := []redisstore.Option{redisstore.WithClientConfig(rc), redisstore.WithKeyPrefix(cfg.RedisPrefix), redisstore.WithLogger(log)}
	if cfg.ReplicaAcks > 0 {
		opts = append(opts, redisstore.WithReplicaAcks(cfg.ReplicaAcks, cfg.ReplicaAckTimeout))
	}
	if cfg.AllowEviction {
		log.Warn("accepting a maxmemory-policy that may evict the store's keys (allkeys-*): under memory pressure Redis may drop entries of the inventory (-redis-allow-eviction)")
		opts = append(opts, redisstore.WithEvictionAllowed())
	}
	store, err := redisstore.New(client, opts...)
	if err != nil {
		return badConfig(err)
	}
	tel, err := newTelemetry(ctx, cfg, client, store, log)
	if err != nil {
		return err
	}
	defer tel.shutdown(context.WithoutCancel(ctx)) // after serving: flush the last spans
	open := new(atomic.Bool)
	api, err := inventory.New(gatedStore{store, open}, inventory.WithAuthenticator(ring), inventory.WithLogger(log),
		inventory.WithStoreTimeout(cfg.StoreTimeout), inventory.WithObserver(tel.observer),
		inventory.WithMaxStaleness(cfg.MaxStaleness))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}

	// Deferred in this order, they run as: cancel the seeding, wait for
	// it, then close the client (deferred above).
	var seeding sync.WaitGroup
	defer seeding.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := probes{store: store, timeout: cfg.StoreTimeout, log: log, seeded: new(atomic.Bool), state: new(readiness)}
	seeding.Go(func() { seedUntilDone(ctx, log, api, store, seed, cfg.StoreTimeout, open, p.seeded) })
	if cfg.APIKeysFile != "" {
		keyLog := log.With("setting", "INVENTORY_API_KEYS_FILE")
		seeding.Go(func() { apikeys.WatchFile(ctx, keyLog, cfg.APIKeysFile, keyFileInterval, ring) })
	}

	log.Info("serving", "addr", ln.Addr().String(), "framework", cfg.Framework, "store", storeName,
		"store_timeout", cfg.StoreTimeout, "replica_acks", cfg.ReplicaAcks,
		"try", fmt.Sprintf("curl -H 'Authorization: Bearer <key>' http://%s/v1/inventory", ln.Addr()))
	if ready != nil {
		ready(ln.Addr().String())
	}
	if cfg.Framework == "fiber" {
		app := fiber.New(FiberConfig())
		tel.mountFiber(app)
		for path, h := range p.routes() {
			app.Get(path, func(c *fiber.Ctx) error {
				status, ctype, body := h(c.UserContext())
				c.Set("Content-Type", ctype)
				c.Set("Cache-Control", "no-store")
				return c.Status(status).Send(body)
			})
		}
		if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
			ln.Close()
			return err
		}
		// Methods fiber routes nowhere (PROPFIND, a lowercase get) get the API's 405.
		if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil {
			ln.Close()
			return err
		}
		return ServeFiber(ctx, log, ln, app)
	}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery())
	tel.mountGin(engine)
	for path, h := range p.routes() {
		engine.GET(path, func(c *gin.Context) {
			status, ctype, body := h(c.Request.Context())
			c.Header("Cache-Control", "no-store")
			c.Data(status, ctype, body)
		})
	}
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		ln.Close()
		return err
	}
	// Methods gin routes nowhere (PROPFIND, a lowercase get) get the API's 405.
	noRoute, err := inventorygin.NoRoute(api, "/v1")
	if err != nil {
		ln.Close()
		return err
	}
	engine.NoRoute(noRoute)
	return ServeHTTP(ctx, log, ln, engine)
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
			return nil, nil, "", fmt.Errorf("INVENTORY_REDIS_CA_FILE, _CERT_FILE, _KEY_FILE: %w", err)
		}
	}
	if cfg.RedisPasswordFile != "" {
		if err := rc.UsePasswordFile(cfg.RedisPasswordFile); err != nil {
			return nil, nil, "", fmt.Errorf("INVENTORY_REDIS_PASSWORD_FILE: %w", err)
		}
	}
	return rc.NewClient(), rc, "redis " + rc.String(), nil
}

// apiKeys returns the keys to serve with: cfg.APIKeys, or those of
// cfg.APIKeysFile, or a random key, generated now and written once to
// out, so that a first run works without setup and the API is never
// served open.
func apiKeys(cfg Config, out io.Writer) ([]string, error) {
	switch {
	case len(cfg.APIKeys) > 0:
		return cfg.APIKeys, nil
	case cfg.APIKeysFile != "":
		keys, err := apikeys.ReadFile(cfg.APIKeysFile)
		if err != nil {
			return nil, fmt.Errorf("INVENTORY_API_KEYS_FILE: %w", err)
		}
		return keys, nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("generating an API key: %w", err)
	}
	key := hex.EncodeToString(b)
	fmt.Fprintf(out, "No INVENTORY_API_KEYS set: generated the API key for this run (shown once):\n\n    %s\n\n", key)
	return []string{key}, nil
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

// seedOnce seeds the store if it holds no entry, through the Service (the
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
	wrote, err := api.Service().PutIfEmpty(sctx, items...)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	if !open.Load() && !*announced { // once: a retry while the store is not ready says it again otherwise
		*announced = true
		switch {
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
			return f.Error() + " (inventory-server: " + names + ")"
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
