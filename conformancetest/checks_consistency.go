package conformancetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// The consistency check: clients list and update at once, over every base
// URL of the deployment, and the history of what they saw is checked for
// linearizability (see consistency.go for the checking).

const (
	// consistencyPets is the number of pets the run updates. Lists are
	// kept whole (one read of every pet in play at one instant), so the
	// state of the model is these few quantities; more pets would add
	// nothing a replica's staleness does not already show with three.
	consistencyPets = 3
	// maxConsistencyClients bounds Config.ConsistencyClients.
	maxConsistencyClients = 256
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

func consistencyChecks() []*check {
	return []*check{{
		name:   "consistency/linearizable",
		source: "CONTRACT.md §Consistency",
		rule: "Every list and every update appears to take effect at one instant between its call and its return, across every replica of the deployment: " +
			"a list shows every update answered before it was sent and one instant of all pets, no write that was never made; an update's answer carries its own write.",
		writes: true,
		run:    runConsistency,
	}}
}

// opKind tells a list from an update.
type opKind uint8

const (
	opList opKind = iota
	opUpdate
)

// cop is one request of the consistency run, as a client saw it. Times
// are nanoseconds since the run started, on the monotonic clock.
type cop struct {
	client int
	base   int // index in the run's base URLs
	kind   opKind
	call   int64
	ret    int64 // in the model: for an unknown outcome, see judge
	// answered is when the answer (or its failure) came.
	answered int64
	// An update: the pet (its index among the pets in play), the
	// quantity sent, whether its outcome is known (answered 200 with an
	// item) and the quantity that answer carried. answer says how it was
	// answered, for the words of a failure.
	slot   int
	qty    int64
	known  bool
	got    int64
	answer string
	// A list: the quantity of each pet in play (-1 when the list lacked
	// it). ok is false for a list that failed (no answer, not 200, not a
	// list); it is dropped from the history.
	seen [consistencyPets]int64
	ok   bool
	// round is the round of the run the request belongs to; barrier
	// marks the list that ends a round, sent alone.
	round   int
	barrier bool
}

// consistencyRun is what the clients share.
type consistencyRun struct {
	c       *checker
	bases   []string
	pets    []item // the pets in play, with their quantities before the run
	slotOf  map[int64]int
	start   time.Time
	until   time.Duration
	mu      sync.Mutex
	next    int64 // the next quantity to write
	avoid   []int64
	listErr []string // per base URL: the first reason a list failed
	// checkLimit bounds the linearizability check (default: the run's
	// duration twice, at least 30 s); a check cut short is not judged.
	checkLimit time.Duration
}

func runConsistency(c *checker) {
	cfg := c.rn.cfg
	if cfg.Consistency == 0 {
		c.skipf("opt-in: this check writes many times; give it a duration with -consistency DURATION (Config.Consistency), and the deployment's other replicas with more -base-url flags (Config.Replicas)")
	}
	items := c.pets()
	r := &consistencyRun{c: c, bases: append([]string{cfg.BaseURL}, cfg.Replicas...), slotOf: map[int64]int{},
		until: cfg.Consistency, next: firstConsistencyQuantity}
	r.pets = items[:min(consistencyPets, len(items))]
	for i, p := range r.pets {
		c.touch(p.id) // restored at the end, as every check's writes are
		r.slotOf[p.id] = i
		r.avoid = append(r.avoid, p.qty)
	}
	r.listErr = make([]string, len(r.bases))
	ops := r.record(cfg.ConsistencyClients)
	if c.ctx.Err() != nil {
		return // interrupted: runCheck says so, and restores
	}
	lists := make([]int, len(r.bases))
	for _, o := range ops {
		if o.kind == opList && o.ok {
			lists[o.base]++
		}
	}
	for b, n := range lists {
		if n == 0 {
			c.failf(nil, "lists answered 200 through every base URL of the deployment",
				"no list through %s was answered in %v (the first: %s): its requests tell nothing, so the deployment cannot be judged consistent through it", r.bases[b], cfg.Consistency, r.listErr[b])
		}
	}
	v := r.judge(ops)
	c.mu.Lock()
	c.res.Detail = v.detail
	c.mu.Unlock()
	for _, f := range v.failures {
		c.failf(nil, "every request to appear to take effect at one instant between its call and its return, on one copy of the inventory (CONTRACT.md §Consistency)", "%s", f)
	}
	if v.picture != "" {
		c.mu.Lock()
		c.res.Visualization = v.picture
		c.mu.Unlock()
	}
	if len(v.failures) == 0 && v.notJudged != "" {
		c.skipf("not judged: %s", v.notJudged)
	}
}

// record runs the clients until the run's duration has passed and
// returns every request they sent, ordered by call. They run in rounds of
// consistencyRound, each ended by a barrier list (see consistencyRound).
func (r *consistencyRun) record(clients int) []cop {
	r.start = time.Now()
	var (
		mu  sync.Mutex
		all []cop
	)
	rngs := make([]*rand.Rand, clients)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), uint64(r.start.UnixNano())))
	}
	for round := 0; time.Since(r.start) < r.until && r.c.ctx.Err() == nil; round++ {
		end := min(time.Duration(round+1)*consistencyRound, r.until)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				var mine []cop
				for time.Since(r.start) < end && r.c.ctx.Err() == nil {
					// Each client keeps to one base URL, so that every
					// replica serves its clients' requests back to back.
					o := cop{client: i, base: i % len(r.bases), round: round}
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
		// The barrier, through each base URL in turn; in the picture
		// it is the client numbered after the others.
		b := cop{client: clients, base: round % len(r.bases), round: round, barrier: true}
		r.list(&b)
		all = append(all, b)
	}
	slices.SortFunc(all, func(a, b cop) int { return cmp.Compare(a.call, b.call) })
	return all
}

func (r *consistencyRun) now() int64 { return int64(time.Since(r.start)) }

// list sends one list and records what it showed of the pets in play.
func (r *consistencyRun) list(o *cop) {
	o.kind = opList
	o.call = r.now()
	ex := r.c.rn.send(r.c.ctx, request{method: http.MethodGet, path: "/inventory", base: r.bases[o.base]})
	o.ret = r.now()
	o.answered = o.ret
	r.count()
	var err error
	var items []item
	if ex.err != nil {
		err = ex.err
	} else {
		items, err = parseItems(ex.resp)
	}
	if err != nil {
		r.mu.Lock()
		if r.listErr[o.base] == "" {
			r.listErr[o.base] = r.c.rn.scrub(err.Error())
		}
		r.mu.Unlock()
		return
	}
	o.ok = true
	for i := range r.pets { // the slots past them stay 0, as in the model
		o.seen[i] = -1
	}
	for _, it := range items {
		if s, ok := r.slotOf[it.id]; ok {
			o.seen[s] = it.qty
		}
	}
}

// update sends one update of the pet in slot with a quantity no other
// write of the run uses.
func (r *consistencyRun) update(o *cop, slot int) {
	o.kind = opUpdate
	o.slot = slot
	r.mu.Lock()
	for slices.Contains(r.avoid, r.next) {
		r.next++
	}
	o.qty = r.next
	r.next++
	r.mu.Unlock()
	o.call = r.now()
	ex := r.c.rn.send(r.c.ctx, request{method: http.MethodPatch, path: itemPath(r.pets[slot].id), base: r.bases[o.base],
		contentType: "application/json", body: qtyBody(o.qty)})
	o.ret = r.now()
	o.answered = o.ret
	r.count()
	switch {
	case ex.err != nil:
		o.answer = "no answer (" + r.c.rn.scrub(ex.err.Error()) + ")"
	case ex.resp.status != http.StatusOK:
		o.answer = errorSummary(ex.resp)
		if ex.resp.status < 500 {
			// Refused: it changed nothing, so the history holds it as
			// a write of unknown outcome all the same (a refusal that
			// did write would show in a list); the update checks
			// judge the refusal itself.
			o.answer += " (a refusal)"
		}
	default:
		v, err := decodeJSON(ex.resp.body)
		obj, _ := v.(map[string]any)
		q, ok := integerValue(obj["quantity"])
		if err != nil || !ok || !q.IsInt64() {
			o.answer = "200 without an InventoryItem"
			return
		}
		o.known, o.got, o.answer = true, q.Int64(), "200"
	}
}

func (r *consistencyRun) count() {
	r.c.mu.Lock()
	r.c.res.Requests++
	r.c.mu.Unlock()
}

// at formats a time of the run: "1.234s".
func at(ns int64) string {
	return fmt.Sprintf("%.3fs", time.Duration(ns).Seconds())
}

// msOf formats a duration in milliseconds: "87 ms", "2.4 ms", "0.03 ms".
func msOf(ns int64) string {
	d := time.Duration(ns)
	if d < time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// describeOp names a request for the words of a failure.
func (r *consistencyRun) describeOp(o *cop) string {
	var sb strings.Builder
	switch o.kind {
	case opList:
		fmt.Fprintf(&sb, "the list by client %d through %s, sent at %s and answered at %s", o.client, r.bases[o.base], at(o.call), at(o.ret))
	default:
		fmt.Fprintf(&sb, "the update of pet %d to %d by client %d through %s, sent at %s and answered %s at %s",
			r.pets[o.slot].id, o.qty, o.client, r.bases[o.base], at(o.call), o.answer, at(o.answered))
	}
	return sb.String()
}
