package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/server/internal/logrepeat"
	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// bootState is how far the store's boot went, for /readyz.
type bootState struct {
	// seeding: -seed asks to initialize the store, and the boot has not
	// done it yet.
	seeding atomic.Bool
	// seeded: the store is initialized and ready, the inventory loaded.
	seeded atomic.Bool
	last   atomic.Pointer[error] // the last try's failure
}

// lastErr is the last try's failure, or nil.
func (s *bootState) lastErr() error {
	if p := s.last.Load(); p != nil {
		return *p
	}
	return nil
}

// storeInit is what a run does to the store before it serves, and all
// that -init-only does, in steps: the Redis's persistence looked at
// (lookAtDurability), the store initialized with -seed, or a store seeded
// before the initialization marker adopted (initialize), and the store
// ready (ready). It logs what it did once, however many tries it takes.
type storeInit struct {
	cfg   Config
	seed  []inventory.Item // what -seed initializes a store without its marker with
	store *redisstore.Store
	log   *slog.Logger

	announced   bool // what -seed did (or that there is none) was logged
	durableTold bool // the Redis's persistence was looked at (and a risk logged)
}

// storeBoot is the background step of a start that opens the API: the
// steps of storeInit, then the gate opened and the inventory loaded into
// the API's list cache, tried until done. It runs in one goroutine, which
// alone uses its state.
type storeBoot struct {
	storeInit
	served served
	state  *bootState // what /readyz reads
}

// untilDone tries once at once, then again, backing off to one try every
// 2 s, until it succeeds (and sets seeded) or ctx is done. A failure is
// logged at WARN, each distinct one once a minute at most (a
// logrepeat.Gate), except a configuration fault or a store not
// initialized, which the store logs itself, once, with its fix; a store
// not initialized also becomes what the closed gate answers, so that a
// client reads it too.
func (b *storeBoot) untilDone(ctx context.Context) {
	var repeats logrepeat.Gate
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		err := b.once(ctx)
		b.state.last.Store(&err)
		switch {
		case err == nil:
			b.state.seeded.Store(true)
			return
		case ctx.Err() != nil:
			return // shutting down
		case errors.Is(err, redisstore.ErrNotInitialized):
			b.served.gate.refuse(err)
		case errors.Is(err, redisstore.ErrMisconfigured):
		default:
			if ok, held := repeats.Allow(err.Error(), time.Now()); ok && held > 0 {
				b.log.Warn("the store cannot serve yet; retrying in the background", "error", err, "repeated", held)
			} else if ok {
				b.log.Warn("the store cannot serve yet; retrying in the background", "error", err)
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

// once is one try: the persistence looked at, the store initialized (with
// -seed), ready, the gate opened and the inventory loaded (API.Preload),
// so that the first list after a start is not a full read of a large
// inventory. It returns nil when all is done, else why not (Redis did not
// answer, refused, the store is not initialized, or the seed was not
// acknowledged as asked).
func (b *storeBoot) once(ctx context.Context) error {
	b.lookAtDurability(ctx)
	if err := b.initialize(ctx); err != nil {
		return err
	}
	b.state.seeding.Store(false) // the seed is in, if any: /readyz asks the store itself
	if err := b.ready(ctx); err != nil {
		return err
	}
	b.served.gate.open()
	start := time.Now()
	if err := b.served.api.Preload(ctx); err != nil {
		return fmt.Errorf("loading the inventory: %w", err)
	}
	b.log.Info("loaded the inventory: ready", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// initOnly is -init-only's whole run: one try of storeInit's steps (the
// store initialized with -seed unless it already is, or adopted; ready),
// without an API or a listener. Its error is the try's, which the command
// logs and exits 1 with; a Job's backoffLimit tries again.
func (l *lifecycle) initOnly(ctx context.Context) error {
	i := storeInit{cfg: l.cfg, seed: l.seed, store: l.st.store, log: l.log}
	i.lookAtDurability(ctx)
	if err := i.initialize(ctx); err != nil {
		return err
	}
	if err := i.ready(ctx); err != nil {
		return err
	}
	l.log.Info("the store is initialized and can serve: exiting (-init-only)", "store", l.st.name)
	return nil
}

// ready checks that the store can serve, which includes that it is
// initialized.
func (i *storeInit) ready(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, i.cfg.StoreTimeout)
	defer cancel()
	if err := i.store.Ready(rctx); err != nil {
		return fmt.Errorf("checking that the store can serve: %w", err)
	}
	return nil
}

// initialize initializes the store with the seed when -seed asks, and logs
// (once, however many tries it takes) what it did.
func (i *storeInit) initialize(ctx context.Context) error {
	if i.cfg.Seed == "" {
		// A store seeded before the marker existed is adopted, not refused.
		adopted, err := i.store.Adopt(ctx)
		if err != nil {
			return fmt.Errorf("adopting a store seeded before the initialization marker: %w", err)
		}
		if adopted {
			i.announce("adopted a store seeded before the initialization marker: wrote its marker, kept its entries")
		} else {
			i.announce("no seed (-seed): the store is served once it is initialized; a store without its initialization marker is not ready")
		}
		return nil
	}
	// Redis writes a large seed in bounded chunks: give it the store
	// timeout once, and once more per 50 000 pets.
	sctx, cancel := context.WithTimeout(ctx, seedTimeout(i.cfg.StoreTimeout, len(i.seed)))
	defer cancel()
	start := time.Now()
	did, err := i.store.Initialize(sctx, i.seed...)
	if err != nil {
		return fmt.Errorf("initializing the store (-seed %s): %w", i.cfg.Seed, err)
	}
	switch did {
	case redisstore.Initialized:
		i.announce("initialized the store (-seed)", "seed", i.cfg.Seed, "items", len(i.seed), "took", time.Since(start).Round(time.Millisecond))
	case redisstore.Adopted:
		i.announce("adopted a store seeded before the initialization marker: wrote its marker, kept its entries; -seed wrote nothing", "seed", i.cfg.Seed)
	default:
		i.announce("the store is already initialized: not seeding (-seed initializes only a store without its marker)", "seed", i.cfg.Seed)
	}
	return nil
}

// announce logs msg at INFO, the first time only.
func (i *storeInit) announce(msg string, attrs ...any) {
	if i.announced {
		return
	}
	i.announced = true
	i.log.Info(msg, attrs...)
}

// lookAtDurability logs, once, when the Redis keeps nothing across a
// restart: a restart would wipe the store (which is then not served).
func (i *storeInit) lookAtDurability(ctx context.Context) {
	if i.durableTold {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, i.cfg.StoreTimeout)
	defer cancel()
	risk, err := i.store.DurabilityRisk(ctx)
	if err != nil {
		return // Redis did not answer: look again at the next try
	}
	i.durableTold = true
	if risk != "" {
		i.log.Warn(risk)
	}
}

// seedTimeout is how long a seed of n items may take.
func seedTimeout(storeTimeout time.Duration, n int) time.Duration {
	return storeTimeout * time.Duration(1+n/50_000)
}
