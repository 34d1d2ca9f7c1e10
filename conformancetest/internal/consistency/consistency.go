package consistency

import (
	"context"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// The consistency check: clients list and update at once, over every base
// URL of the deployment, and the history of what they saw is checked for
// linearizability by package internal/linearize.

const (
	// MaxClients bounds Config.ConsistencyClients.
	MaxClients = 256
	// firstConsistencyQuantity is the first quantity the run writes; each
	// write takes the next one, so that every value read names the one
	// write that made it.
	firstConsistencyQuantity = 1_000_000
)

// Check is the consistency check, consistency/linearizable.
var Check = &suite.Check{
	Name:   "consistency/linearizable",
	Source: "CONTRACT.md §Consistency",
	Rule: "Every list and every update appears to take effect at one instant between its call and its return, across every replica of the deployment: " +
		"a list shows every update answered before it was sent and one instant of all pets, no write that was never made; an update's answer carries its own write.",
	Writes:  true,
	Run:     run,
	Prepare: Prepare,
}

// Checks are the checks of this package, in run order: Check.
var Checks = []*suite.Check{Check}

// consistencyRun is what the clients share.
type consistencyRun struct {
	c   *suite.Checker
	cfg suite.Settings
	// ctx is the run's own context, which a fault that cannot be applied
	// ends; the check's is back for restoring.
	ctx    context.Context
	bases  []string
	pets   []wire.Item // the pets in play, with their quantities before the run
	slotOf map[int64]int
	start  time.Time
	until  time.Duration
	mu     sync.Mutex
	next   int64 // the next quantity to write
	avoid  []int64
	// longest is the longest round the run chose (see roundLength).
	longest time.Duration
}

// run judges consistency/linearizable: clients list and update at once,
// over every base URL of the deployment, while the schedule's faults are
// applied; after the last fault, the run waits for the deployment to
// recover; then the history is judged.
func run(c *suite.Checker) {
	cfg := c.Settings()
	if cfg.Consistency == 0 {
		c.Skipf("opt-in: this check writes many times; give it a duration with -consistency DURATION (Config.Consistency), and the deployment's other replicas with more -base-url flags (Config.Replicas)")
	}
	r := newRun(c)
	sched, err := newSchedule(c.Ctx(), cfg, c.Scrub)
	if err != nil {
		c.StopRun(err)
		return
	}
	// The run's own context, which a fault that cannot be applied ends;
	// the check's is back for restoring.
	ctx, stop := context.WithCancel(c.Ctx())
	defer stop()
	r.ctx = ctx
	started := time.Now()
	ops := r.record(cfg.ConsistencyClients, func(start time.Time) { sched.start(ctx, start, stop) })
	applied, ferr := sched.wait()
	if ferr != nil {
		c.StopRun(ferr)
		return
	}
	if c.Ctx().Err() != nil {
		return // interrupted: runCheck says so, and restores
	}
	ops = r.awaitRecovery(ops, applied)
	r.judge(started, ops, applied)
}

// newRun reads the pets in play and prepares the run of check c.
func newRun(c *suite.Checker) *consistencyRun {
	cfg := c.Settings()
	items := c.Pets() // the strict list: the quantities as they are
	// Under a staleness bound a list may show a state up to the bound
	// old: one from before a write just made (the restore of a run
	// before) would show a quantity this run never wrote. Once the bound
	// has passed, no list shows a state older than these quantities.
	c.Sleep(cfg.ConsistencyStaleness)
	// A base URL given twice is one way to the deployment, judged as
	// one (a saved history names each base once).
	r := &consistencyRun{c: c, cfg: cfg, bases: linearize.UniqueBases(append([]string{cfg.BaseURL}, cfg.Replicas...)), slotOf: map[int64]int{},
		until: cfg.Consistency, next: firstConsistencyQuantity}
	r.pets = items[:min(linearize.MaxPets, len(items))]
	for i, p := range r.pets {
		c.Touch(p.ID) // restored at the end, as every check's writes are
		r.slotOf[p.ID] = i
		r.avoid = append(r.avoid, p.Qty)
	}
	return r
}

// judge judges the history of the run started at started, its requests
// ops and its faults applied, and says the verdict in the check's result.
func (r *consistencyRun) judge(started time.Time, ops []linearize.Op, applied []linearize.Fault) {
	c, cfg := r.c, r.cfg
	// Nothing of the history holds the key (a base URL may, by mistake):
	// it is saved, and its words are the check's.
	bases := make([]string, len(r.bases))
	for i, b := range r.bases {
		bases[i] = c.Scrub(b)
	}
	h := &linearize.History{Bases: bases, Clients: cfg.ConsistencyClients, Duration: r.until, Ops: ops, Faults: applied}
	for _, p := range r.pets {
		h.Pets = append(h.Pets, linearize.Pet{ID: p.ID, Qty: p.Qty})
	}
	opt := options(cfg)
	v := linearize.Judge(h, opt)
	failures, skip, info, picture := consistencyResult(h, &v, opt, cfg.ConsistencyHTML)
	info.Round = r.longest
	if cfg.ConsistencyHistory != "" {
		if err := saveHistory(cfg.ConsistencyHistory, h, started, opt, &v); err != nil {
			failures = append(failures, report.Failure{Kind: KindHistoryNotSaved, Problem: err.Error(), Expected: "the history saved (-consistency-history)"})
		} else {
			info.History = cfg.ConsistencyHistory
		}
	}
	c.UpdateResult(func(res *report.Result) {
		res.Detail, res.Visualization, res.Consistency = v.Detail, picture, info
	})
	for _, f := range failures {
		c.AddFailure(f)
	}
	if len(failures) == 0 && skip != "" {
		c.Skipf("%s", skip)
	}
}

// options are how the run's history is judged, from the run's settings.
func options(cfg suite.Settings) linearize.Options {
	return linearize.Options{Staleness: cfg.ConsistencyStaleness, MinUpdates: cfg.ConsistencyMinUpdates, StaleIfError: cfg.ConsistencyStaleIfError,
		Recovery: cfg.ConsistencyRecovery}
}
