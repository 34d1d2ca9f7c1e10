package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

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

// storeBoot is the background step of a start that opens the API: it
// initializes the store when -seed asks (Store.Initialize: only a store
// without its marker), checks that the store is ready (which includes that
// it is initialized), opens the gate and loads the inventory into the
// API's list cache. It runs in one goroutine, which alone uses its state.
type storeBoot struct {
	settled
	store  *redisstore.Store
	served served
	state  *bootState // what /readyz reads
	log    *slog.Logger

	announced   bool // what -seed did (or that there is none) was logged
	durableTold bool // the Redis's persistence was looked at (and a risk logged)
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
	if err := b.prepare(ctx); err != nil {
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

// prepare is what a try does before it serves, and all that -init-only
// does: the persistence looked at, the store initialized (with -seed) and
// ready.
func (b *storeBoot) prepare(ctx context.Context) error {
	b.lookAtDurability(ctx)
	if err := b.initialize(ctx); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, b.cfg.StoreTimeout)
	defer cancel()
	if err := b.store.Ready(rctx); err != nil {
		return fmt.Errorf("checking that the store can serve: %w", err)
	}
	return nil
}

// initOnly is -init-only's whole run: one try of the boot's prepare (the
// store initialized with -seed unless it already is, or adopted; ready),
// without an API or a listener. Its error is the try's, which the command
// logs and exits 1 with; a Job's backoffLimit tries again.
func (l *lifecycle) initOnly(ctx context.Context) error {
	b := storeBoot{settled: l.settled, store: l.st.store, state: new(bootState), log: l.log}
	if err := b.prepare(ctx); err != nil {
		return err
	}
	l.log.Info("the store is initialized and can serve: exiting (-init-only)", "store", l.st.name)
	return nil
}

// initialize initializes the store with the seed when -seed asks, and logs
// (once, however many tries it takes) what it did.
func (b *storeBoot) initialize(ctx context.Context) error {
	if !b.settled.initialize {
		// A store seeded before the marker existed is adopted, not refused.
		adopted, err := b.store.Adopt(ctx)
		if err != nil {
			return fmt.Errorf("adopting a store seeded before the initialization marker: %w", err)
		}
		if adopted {
			b.announce("adopted a store seeded before the initialization marker: wrote its marker, kept its entries")
		} else {
			b.announce("no seed (-seed): the store is served once it is initialized; a store without its initialization marker is not ready")
		}
		return nil
	}
	// Redis writes a large seed in bounded chunks: give it the store
	// timeout once, and once more per 50 000 pets.
	sctx, cancel := context.WithTimeout(ctx, seedTimeout(b.cfg.StoreTimeout, len(b.seed)))
	defer cancel()
	start := time.Now()
	did, err := b.store.Initialize(sctx, b.seed...)
	if err != nil {
		return fmt.Errorf("initializing the store (-seed %s): %w", b.cfg.Seed, err)
	}
	b.state.seeding.Store(false)
	switch did {
	case redisstore.Initialized:
		b.announce("initialized the store (-seed)", "seed", b.cfg.Seed, "items", len(b.seed), "took", time.Since(start).Round(time.Millisecond))
	case redisstore.Adopted:
		b.announce("adopted a store seeded before the initialization marker: wrote its marker, kept its entries; -seed wrote nothing", "seed", b.cfg.Seed)
	default:
		b.announce("the store is already initialized: not seeding (-seed initializes only a store without its marker)", "seed", b.cfg.Seed)
	}
	return nil
}

// announce logs msg at INFO, the first time only.
func (b *storeBoot) announce(msg string, attrs ...any) {
	if b.announced {
		return
	}
	b.announced = true
	b.log.Info(msg, attrs...)
}

// lookAtDurability logs, once, when the Redis keeps nothing across a
// restart: a restart would wipe the store (which is then not served).
func (b *storeBoot) lookAtDurability(ctx context.Context) {
	if b.durableTold {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.StoreTimeout)
	defer cancel()
	risk, err := b.store.DurabilityRisk(ctx)
	if err != nil {
		return // Redis did not answer: look again at the next try
	}
	b.durableTold = true
	if risk != "" {
		b.log.Warn(risk)
	}
}

// seedTimeout is how long a seed of n items may take.
func seedTimeout(storeTimeout time.Duration, n int) time.Duration {
	return storeTimeout * time.Duration(1+n/50_000)
}
