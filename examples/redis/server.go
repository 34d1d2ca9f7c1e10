package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
	"github.com/redis/go-redis/v9"
)

// run serves until ctx is done, then shuts down gracefully. out receives
// the generated API key, if any; ready, when not nil, is called with the
// listening address once the server accepts connections.
//
// It listens before it talks to Redis, so that a taken address fails at
// once, and seeds in the background: /readyz answers 503 until the seed
// is in.
func run(ctx context.Context, cfg config, log *slog.Logger, out io.Writer, ready func(addr string)) error {
	seed := demo.Items()
	if cfg.seedFile != "" {
		var err error
		if seed, err = demo.LoadSeed(cfg.seedFile); err != nil {
			return err
		}
	}
	keys, _, err := demo.APIKeys(out)
	if err != nil {
		return err
	}

	client, storeName, closeRedis, err := connect(cfg.redisURL, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	opts := []redisstore.Option{redisstore.WithKeyPrefix(cfg.redisPrefix), redisstore.WithLogger(log)}
	if cfg.replicaAcks > 0 {
		opts = append(opts, redisstore.WithReplicaAcks(cfg.replicaAcks, cfg.ackTimeout))
	}
	store, err := redisstore.New(client, opts...)
	if err != nil {
		return err
	}
	tel, err := newTelemetry(ctx, client, store, log)
	if err != nil {
		return err
	}
	defer tel.shutdown(context.WithoutCancel(ctx)) // after serving: flush the last spans
	api, err := inventory.New(store, inventory.WithAPIKeys(keys...), inventory.WithLogger(log),
		inventory.WithStoreTimeout(cfg.storeTimeout), inventory.WithObserver(tel.observer))
	if err != nil {
		return err
	}
	ln, err := demo.Listen(cfg.addr)
	if err != nil {
		return err
	}

	// Deferred in this order, they run as: cancel the seeding, wait for
	// it, then close the client (deferred above).
	var seeding sync.WaitGroup
	defer seeding.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := probes{store: store, timeout: cfg.storeTimeout, log: log, seeded: new(atomic.Bool)}
	seeding.Go(func() { seedUntilDone(ctx, log, api, seed, cfg.storeTimeout, p.seeded) })

	log.Info("serving", "addr", ln.Addr().String(), "framework", cfg.framework, "store", storeName,
		"store_timeout", cfg.storeTimeout, "replica_acks", cfg.replicaAcks,
		"try", fmt.Sprintf("curl -H 'Authorization: Bearer <key>' http://%s/v1/inventory", ln.Addr()))
	if ready != nil {
		ready(ln.Addr().String())
	}
	if cfg.framework == "fiber" {
		app := fiber.New(demo.FiberConfig())
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
		return demo.ServeFiber(ctx, log, ln, app)
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
	return demo.ServeHTTP(ctx, log, ln, engine)
}

// connect returns a client on the Redis at url (one node, Cluster or
// Sentinel: see redisstore.ParseURL) or, when url is empty, on an embedded
// miniredis started now. storeName describes it for the log, without
// credentials.
func connect(url string, log *slog.Logger) (client redis.UniversalClient, storeName string, closeFn func(), err error) {
	var embedded *miniredis.Miniredis
	if url == "" {
		embedded = miniredis.NewMiniRedis()
		if err := embedded.Start(); err != nil {
			return nil, "", nil, fmt.Errorf("starting the embedded Redis: %w", err)
		}
		log.Info("REDIS_URL is not set: using an embedded in-memory Redis (miniredis) whose data is lost when the process stops; point at a real Redis with REDIS_URL=redis://127.0.0.1:6379/0",
			"addr", embedded.Addr())
		url = "redis://" + embedded.Addr() + "/0"
	}
	rc, err := redisstore.ParseURL(url)
	if err != nil {
		if embedded != nil {
			embedded.Close()
		}
		return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	client = rc.NewClient()
	storeName = "redis " + rc.String()
	if embedded != nil {
		storeName = "embedded miniredis " + rc.Single.Addr
	}
	return client, storeName, func() {
		_ = client.Close()
		if embedded != nil {
			embedded.Close()
		}
	}, nil
}

// seedOnce seeds the store if it holds no entry, through the Service (the
// API's own checks; redisstore's PutIfEmpty makes it atomic), then loads
// the inventory into the API's list cache (API.Preload), so that the first
// list after a start is not a full read of a large inventory. It reports
// whether both are done (false: Redis did not answer, or did not
// acknowledge the seed as asked).
func seedOnce(ctx context.Context, log *slog.Logger, api *inventory.API, items []inventory.Item, timeout time.Duration) bool {
	// Redis writes a large seed in bounded chunks: give it the store
	// timeout once, and once more per 50 000 pets.
	sctx, cancel := context.WithTimeout(ctx, seedTimeout(timeout, len(items)))
	defer cancel()
	start := time.Now()
	wrote, err := api.Service().PutIfEmpty(sctx, items...)
	switch {
	case err != nil && ctx.Err() != nil:
		return false // shutting down
	case err != nil:
		log.Warn("could not seed the store yet; retrying in the background", "error", err)
		return false
	case wrote:
		log.Info("seeded the empty store", "items", len(items), "took", time.Since(start).Round(time.Millisecond))
	default:
		log.Info("the store already holds entries: not seeding")
	}
	start = time.Now()
	if err := api.Preload(ctx); err != nil {
		if ctx.Err() == nil {
			log.Warn("could not load the inventory yet; retrying in the background", "error", err)
		}
		return false
	}
	log.Info("loaded the inventory", "took", time.Since(start).Round(time.Millisecond))
	return true
}

// seedTimeout is how long a seed of n items may take.
func seedTimeout(storeTimeout time.Duration, n int) time.Duration {
	return storeTimeout * time.Duration(1+n/50_000)
}

// seedUntilDone tries seedOnce at once, then again, backing off to one try
// every 5 s, until it succeeds (and sets seeded) or ctx is done.
func seedUntilDone(ctx context.Context, log *slog.Logger, api *inventory.API, items []inventory.Item, timeout time.Duration, seeded *atomic.Bool) {
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		if seedOnce(ctx, log, api, items, timeout) {
			seeded.Store(true)
			return
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
	seeded  *atomic.Bool // the seed is in (or the store held entries already) and the inventory loaded
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

// readyz: the seed is in, the inventory is loaded, and the store can serve (redisstore's Ready
// exercises its own keys the way a request does, so a Cluster node that
// does not own them, a sentinel's port or a replica is not ready); an
// orchestrator stops routing traffic here while it fails.
func (p probes) readyz(ctx context.Context) (int, string, []byte) {
	if !p.seeded.Load() {
		return http.StatusServiceUnavailable, "application/json", []byte(`{"status":"unavailable","message":"the inventory store is not seeded yet"}`)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := p.store.Ready(ctx); err != nil {
		p.log.WarnContext(ctx, "not ready: the store cannot serve", "error", err)
		return http.StatusServiceUnavailable, "application/json", []byte(`{"status":"unavailable","message":"the inventory store cannot serve"}`)
	}
	return http.StatusOK, "application/json", []byte(`{"status":"ready"}`)
}

func openAPI(context.Context) (int, string, []byte) {
	return http.StatusOK, "application/yaml", inventory.OpenAPI
}
