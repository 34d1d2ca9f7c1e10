package consistency

import (
	"cmp"
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
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
	// consistencyRound is how long the clients run between two
	// barriers: at each, they wait until every request in flight is
	// answered, and one list is sent alone. Its answer is the state at
	// that instant, so the history can be checked round by round: the
	// checker's cost grows with the square of the length of what it
	// checks at once.
	consistencyRound = 100 * time.Millisecond
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
	Writes: true,
	Run:    run,
}

// Checks are the checks of this package, in run order: Check.
var Checks = []*suite.Check{Check}

// consistencyRun is what the clients share.
type consistencyRun struct {
	c *suite.Checker
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
}

// run judges consistency/linearizable: clients list and update at once,
// over every base URL of the deployment, while the schedule's faults are
// applied, and the history is judged.
func run(c *suite.Checker) {
	cfg := c.Settings()
	if cfg.Consistency == 0 {
		c.Skipf("opt-in: this check writes many times; give it a duration with -consistency DURATION (Config.Consistency), and the deployment's other replicas with more -base-url flags (Config.Replicas)")
	}
	items := c.Pets() // the strict list: the quantities as they are
	// Under a staleness bound a list may show a state up to the bound
	// old: one from before a write just made (the restore of a run
	// before) would show a quantity this run never wrote. Once the bound
	// has passed, no list shows a state older than these quantities.
	c.Sleep(cfg.ConsistencyStaleness)
	// A base URL given twice is one way to the deployment, judged as
	// one (a saved history names each base once).
	r := &consistencyRun{c: c, bases: linearize.UniqueBases(append([]string{cfg.BaseURL}, cfg.Replicas...)), slotOf: map[int64]int{},
		until: cfg.Consistency, next: firstConsistencyQuantity}
	r.pets = items[:min(linearize.MaxPets, len(items))]
	for i, p := range r.pets {
		c.Touch(p.ID) // restored at the end, as every check's writes are
		r.slotOf[p.ID] = i
		r.avoid = append(r.avoid, p.Qty)
	}
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

// record runs the clients until the run's duration has passed and
// returns every request they sent, ordered by call. They run in rounds of
// consistencyRound, each ended by a barrier list (see consistencyRound).
func (r *consistencyRun) record(clients int, started func(time.Time)) []linearize.Op {
	r.start = time.Now()
	started(r.start)
	var (
		mu  sync.Mutex
		all []linearize.Op
	)
	rngs := make([]*rand.Rand, clients)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), uint64(r.start.UnixNano())))
	}
	for round := 0; time.Since(r.start) < r.until && r.ctx.Err() == nil; round++ {
		end := min(time.Duration(round+1)*consistencyRound, r.until)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				var mine []linearize.Op
				for time.Since(r.start) < end && r.ctx.Err() == nil {
					// Each client keeps to one base URL, so that every
					// replica serves its clients' requests back to back.
					o := linearize.Op{Client: i, Base: i % len(r.bases), Round: round}
					if rngs[i].IntN(2) == 0 {
						r.list(&o)
					} else {
						r.update(&o, rngs[i].IntN(len(r.pets)))
					}
					mine = append(mine, o)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		// Judged against a staleness bound, a list may take effect that
		// long before it was sent: the barrier pins the state the round
		// left only when it comes that long after every other request of
		// the round (see linearize's pieces).
		if q := r.c.Settings().ConsistencyStaleness; q > 0 {
			select {
			case <-time.After(q):
			case <-r.ctx.Done():
			}
		}
		// The barrier, through each base URL in turn; in the picture
		// it is the client numbered after the others.
		b := linearize.Op{Client: clients, Base: round % len(r.bases), Round: round, Barrier: true, Strict: true}
		r.list(&b)
		all = append(all, b)
	}
	slices.SortFunc(all, func(a, b linearize.Op) int { return cmp.Compare(a.Call, b.Call) })
	return all
}

// options are how the run's history is judged, from the run's settings.
func options(cfg suite.Settings) linearize.Options {
	return linearize.Options{Staleness: cfg.ConsistencyStaleness, MinUpdates: cfg.ConsistencyMinUpdates, StaleIfError: cfg.ConsistencyStaleIfError,
		Recovery: cfg.ConsistencyRecovery}
}

func (r *consistencyRun) now() int64 { return int64(time.Since(r.start)) }

// list sends one list (with Cache-Control: no-cache when o.Strict) and
// records what it showed of the pets in play.
func (r *consistencyRun) list(o *linearize.Op) {
	o.Kind, o.Age = linearize.List, linearize.NoAge
	o.Call = r.now()
	ex := r.c.Send(r.ctx, wire.Request{Method: http.MethodGet, Path: "/inventory", Base: r.bases[o.Base], NoCache: o.Strict})
	o.Return = r.now()
	r.count()
	var err error
	var items []wire.Item
	if ex.Err != nil {
		err = ex.Err
	} else {
		o.Status = ex.Resp.Status
		items, err = wire.ParseItems(ex.Resp)
	}
	if err != nil {
		o.Answer = r.c.Scrub(err.Error())
		return
	}
	o.OK = true
	// The deployment's stale mark (a malformed Cache-Status is none:
	// the cache checks judge its form) and the list's Age.
	o.Stale, _ = wire.StaleMark(ex.Resp.Header)
	if age, err := wire.Age(ex.Resp.Header); err == nil && o.Stale {
		o.Age = age
	}
	for i := range r.pets { // the slots past them stay 0, as in the model
		o.Seen[i] = -1
	}
	for _, it := range items {
		if s, ok := r.slotOf[it.ID]; ok {
			o.Seen[s] = it.Qty
		}
	}
}

// update sends one update of the pet in slot with a quantity no other
// write of the run uses.
func (r *consistencyRun) update(o *linearize.Op, slot int) {
	o.Kind = linearize.Update
	o.Slot = slot
	r.mu.Lock()
	for slices.Contains(r.avoid, r.next) {
		r.next++
	}
	o.Qty = r.next
	r.next++
	r.mu.Unlock()
	o.Call = r.now()
	ex := r.c.Send(r.ctx, wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(r.pets[slot].ID), Base: r.bases[o.Base],
		ContentType: "application/json", Body: wire.QtyBody(o.Qty)})
	o.Return = r.now()
	r.count()
	switch {
	case ex.Err != nil:
		o.Answer = "no answer (" + r.c.Scrub(ex.Err.Error()) + ")"
	case ex.Resp.Status != http.StatusOK:
		o.Answer, o.Status = r.c.Scrub(wire.ErrorSummary(ex.Resp)), ex.Resp.Status
		o.Refused = ex.Resp.Status >= 400 && ex.Resp.Status < 500
		if ex.Resp.Status < 500 {
			// Refused: it changed nothing, so the history holds it as
			// a write of unknown outcome all the same (a refusal that
			// did write would show in a list); the update checks
			// judge the refusal itself.
			o.Answer += " (a refusal)"
		}
	default:
		v, err := wire.DecodeJSON(ex.Resp.Body)
		obj, _ := v.(map[string]any)
		q, ok := wire.IntegerValue(obj["quantity"])
		if err != nil || !ok || !q.IsInt64() {
			o.Answer, o.Status = "200 without an InventoryItem", http.StatusOK
			return
		}
		o.Known, o.Got, o.Answer, o.Status = true, q.Int64(), "200", http.StatusOK
	}
}

func (r *consistencyRun) count() { r.c.CountRequest() }
