package linearize

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// unknownReturn is the return of a write whose outcome is unknown: the
// end of the history.
const unknownReturn = math.MaxInt64

// Verdict is the judgement of a history.
type Verdict struct {
	// Failures say in words what broke the promise; none when the
	// history passed (or was not judged).
	Failures []Failure
	// NotJudged says why there is no verdict (the checker ran out of
	// time), "" when there is one.
	NotJudged string
	// Detail says what was judged and what it cost.
	Detail string
	// Picture is the file the picture of the history was written to, ""
	// when none was.
	Picture string
	// Observed is the observed staleness: the smallest bound, to the
	// millisecond, for which the history passes (0 for a history that
	// passes strictly); nil when no bound makes it pass or none was
	// found in time. ObservedWords says it in words, and why when nil.
	Observed      *time.Duration
	ObservedWords string
}

// Failure is one thing that broke the promise, in words, and what the
// promise expected there.
type Failure struct {
	Problem  string
	Expected string
}

// Outcome is the verdict in one word: "fail" when something broke the
// promise, "not judged" when the checker ran out of time, else "pass".
func (v *Verdict) Outcome() string {
	switch {
	case len(v.Failures) > 0:
		return "fail"
	case v.NotJudged != "":
		return "not judged"
	}
	return "pass"
}

func (v *Verdict) fail(expected, format string, args ...any) {
	v.Failures = append(v.Failures, Failure{Problem: fmt.Sprintf(format, args...), Expected: expected})
}

// Options are how a history is judged.
type Options struct {
	// Staleness is the bound judged against: every list's call is moved
	// this much earlier before the linearizability check (Golab, Li and
	// Shah's Δ-atomicity), so that a list may miss updates answered less
	// than Staleness before it was sent. Zero is the strict promise.
	Staleness time.Duration
	// Limit bounds the linearizability check; zero is the history's
	// duration twice, at least 30 s. A check cut short is not judged.
	// The search for the observed staleness has as long again.
	Limit time.Duration
	// Picture, when not empty, is the file that porcupine's picture of
	// a failed history is written to.
	Picture string
}

// judgement is one history being judged: the requests as the model holds
// them, and what the checks of its pieces found so far.
type judgement struct {
	h   *History
	opt Options
	ops []op
	// keep marks the requests in the model: not failed lists, not
	// updates of unknown outcome that no list showed.
	keep    []bool
	initial cstate
	// writes maps each quantity written to the update that sent it.
	writes map[int64]*op
	rounds int
	// barriers[k] is the list that ends round k (nil when none).
	barriers []*op
	// reach[k] is the last round that a request of round k reaches: an
	// update of unknown outcome first shown in a later round joins the
	// rounds between.
	reach []int
	// lastReturn[k] is the latest return of a request of round k or
	// before, barriers left out.
	lastReturn []int64
	model      porcupine.Model

	nLists, nFailedLists, nUpdates, nUnknown, dropped int
}

// smallestFor bounds the search for the smallest set of requests that
// cannot be ordered.
const smallestFor = 10 * time.Second

// linearizable is what the promise expects of every request, for a
// staleness bound d.
func linearizable(d int64) string {
	if d == 0 {
		return "every request to appear to take effect at one instant between its call and its return, on one copy of the inventory (CONTRACT.md §Consistency)"
	}
	return fmt.Sprintf("every request to appear to take effect at one instant between its call and its return, a list's call moved %s earlier (the staleness bound), on one copy of the inventory (CONTRACT.md §Consistency)", msOf(d))
}

// Judge judges the history h against the consistency promise, strict or
// within opt.Staleness, and measures its observed staleness.
func Judge(h *History, opt Options) Verdict {
	r := prepare(h, opt)
	var v Verdict
	d := int64(opt.Staleness)
	// Every base URL must have answered lists, or its requests tell
	// nothing.
	lists, whyNot := make([]int, len(h.Bases)), make([]string, len(h.Bases))
	for i := range r.ops {
		if o := &r.ops[i]; o.Kind == List && o.OK {
			lists[o.Base]++
		} else if o.Kind == List && whyNot[o.Base] == "" {
			whyNot[o.Base] = o.Answer
		}
	}
	for b, n := range lists {
		if n == 0 {
			v.fail("lists answered 200 through every base URL of the deployment",
				"no list through %s was answered in %v (the first: %s): its requests tell nothing, so the deployment cannot be judged consistent through it", h.Bases[b], h.Duration, whyNot[b])
		}
	}
	ex := r.explain(d)
	for _, f := range ex.findings {
		v.fail(linearizable(d), "%s", f.words)
	}

	limit := opt.Limit
	if limit == 0 {
		limit = max(2*h.Duration, 30*time.Second) // room for a busy CI machine
	}
	start := time.Now()
	deadline := start.Add(limit)
	pieces := r.pieces(d)
	var (
		illegal            []int // pieces not linearizable
		unchecked, checked int
		how                string
		stuck              = -1 // with a bound: the request no order survived
	)
	if d == 0 {
		var longest int
		illegal, unchecked, checked, longest = r.check(pieces, deadline)
		how = fmt.Sprintf("%d operations in %d pieces (the longest %d) checked for linearizability in %v: %d not linearizable, %d not checked in time",
			checked, len(pieces), longest, time.Since(start).Round(time.Millisecond), len(illegal), unchecked)
	} else {
		// Moved lists overlap too many updates for porcupine's search:
		// the sweep decides (see sweep), in one pass.
		ok, known, at := r.sweep(d, deadline)
		checked = r.nLists + r.nUpdates - r.dropped
		switch {
		case !known:
			unchecked = len(pieces)
		case !ok:
			stuck = at
			illegal = []int{r.pieceOf(pieces, at)}
		}
		how = fmt.Sprintf("%d operations checked for linearizability, each list's call moved %s earlier (the staleness bound), in %v: %s",
			checked, msOf(d), time.Since(start).Round(time.Millisecond), map[bool]string{true: "linearizable", false: "not linearizable"}[ok])
		if !known {
			how = fmt.Sprintf("%d operations not checked in time for linearizability, each list's call moved %s earlier (the staleness bound)", checked, msOf(d))
		}
	}
	bases := "1 base URL"
	if len(h.Bases) > 1 {
		bases = fmt.Sprintf("%d base URLs", len(h.Bases))
	}
	v.Detail = fmt.Sprintf("%d clients over %s for %v, pets %s: %d lists (%d more failed, dropped), %d updates (%d of unknown outcome, %d of them shown by no list and left out); %s",
		h.Clients, bases, h.Duration, r.petNames(), r.nLists, r.nFailedLists, r.nUpdates, r.nUnknown, r.dropped, how)
	switch {
	case len(illegal) > 0:
		if len(ex.findings) == 0 {
			first := pieces[illegal[0]].ops
			where := fmt.Sprintf("porcupine found none in %d of %d pieces of the history, the first from %s to %s", len(illegal), len(pieces), at(first[0].Return), at(first[len(first)-1].Return))
			if stuck >= 0 {
				where = "no order survives " + r.describeOp(&r.ops[stuck])
			}
			why := "see the picture (-consistency-html) for how far the best order got"
			if set, pet := r.smallest(pieces[illegal[0]].ops, time.Now().Add(min(limit, smallestFor))); set != nil {
				why = r.describeSmallest(set, pet)
			}
			v.fail(linearizable(d), "no order of the requests, each at an instant between its call and its return, could have been produced by one copy of the inventory (%s), "+
				"though no single list or update breaks a rule on its own: %s", where, why)
		}
	case unchecked > 0:
		v.NotJudged = fmt.Sprintf("the linearizability check of %d pieces of the history (%d operations) did not finish in %v; check a shorter run (-consistency) or fewer clients (-consistency-clients)", unchecked, checked, limit)
	case len(ex.findings) > 0:
		// The direct rules are each sufficient for a violation, so
		// porcupine cannot accept what they found: a bug here.
		v.fail(linearizable(d), "conformancetest bug: porcupine accepted a history that the direct rules reject; the rules' findings above stand")
	}
	if unchecked == 0 {
		v.Observed, v.ObservedWords = r.observe(d, len(illegal) == 0, ex, time.Now().Add(limit))
	} else {
		v.ObservedWords = "not measured: the history was not judged in time"
	}
	if len(v.Failures) > 0 && opt.Picture != "" {
		if err := r.draw(pieces, illegal, ex.findings, limit); err != nil {
			v.fail("the picture of the history written", "the picture could not be written to %s: %v", opt.Picture, err)
		} else {
			v.Picture = opt.Picture
		}
	}
	return v
}

// prepare turns the history into the requests of the model: failed lists
// dropped, each update of unknown outcome given the return of the first
// list that showed it (or dropped, when none did), and the rounds'
// barriers, reaches and last returns found.
func prepare(h *History, opt Options) *judgement {
	r := &judgement{h: h, opt: opt, writes: map[int64]*op{}}
	r.model = r.newModel()
	for i, p := range h.Pets {
		r.initial[i] = p.Qty
	}
	r.ops = make([]op, len(h.Ops))
	for i, o := range h.Ops {
		r.ops[i] = op{Op: o, ret: o.Return}
	}
	for i := range r.ops {
		o := &r.ops[i]
		r.rounds = max(r.rounds, o.Round+1)
		switch {
		case o.Kind == Update:
			r.writes[o.Qty] = o
			r.nUpdates++
			if !o.Known {
				r.nUnknown++
				o.ret = unknownReturn
			}
		case o.OK:
			r.nLists++
		default:
			r.nFailedLists++
		}
	}
	// The first list that showed each value written.
	type seen struct {
		ret   int64
		round int
	}
	firstSeen := map[int64]seen{}
	r.barriers = make([]*op, r.rounds)
	for i := range r.ops {
		o := &r.ops[i]
		if o.Barrier {
			r.barriers[o.Round] = o
		}
		if o.Kind != List || !o.OK {
			continue
		}
		for s, q := range o.Seen[:len(h.Pets)] {
			if w := r.writes[q]; w != nil && w.Slot == s {
				if t, ok := firstSeen[q]; !ok || o.ret < t.ret {
					firstSeen[q] = seen{o.ret, o.Round}
				}
			}
		}
	}
	r.reach = make([]int, r.rounds)
	for k := range r.reach {
		r.reach[k] = k
	}
	r.keep = make([]bool, len(r.ops))
	r.lastReturn = make([]int64, r.rounds)
	for i := range r.ops {
		o := &r.ops[i]
		r.keep[i] = true
		switch {
		case o.Kind == List && !o.OK:
			r.keep[i] = false
			continue
		case o.Kind == Update && !o.Known:
			t, ok := firstSeen[o.Qty]
			if !ok {
				r.dropped++
				r.keep[i] = false
				continue
			}
			o.ret = t.ret
			r.reach[o.Round] = max(r.reach[o.Round], t.round)
		}
		if !o.Barrier {
			r.lastReturn[o.Round] = max(r.lastReturn[o.Round], o.ret)
		}
	}
	for k := 1; k < r.rounds; k++ {
		r.lastReturn[k] = max(r.lastReturn[k], r.lastReturn[k-1])
	}
	return r
}

// piece is a run of rounds checked on its own, as porcupine's operations,
// the first of which pins the state the piece starts from.
type piece struct {
	from, to int // its first and last round
	ops      []porcupine.Operation
}

// pieces cuts the history, with each list's call moved d earlier, where
// a barrier pins a state: after a round whose barrier list was answered,
// when nothing of an earlier round reaches past it, and when the barrier
// was sent at least d after every other request of its round and before
// was answered. Moved d earlier, the barrier then still comes after all of
// them, so it shows the state they left; every later list, sent after the
// barrier was answered, moved d earlier still comes after them too, so
// the next piece may start from that state. (The run leaves d of quiet
// before each barrier when it is judged against a bound d; a larger d
// joins rounds, which is correct but slower.)
func (r *judgement) pieces(d int64) []piece {
	var out []piece
	from, far := 0, 0
	for k := range r.rounds {
		far = max(far, r.reach[k])
		b := r.barriers[k]
		if k == r.rounds-1 || far <= k && b != nil && b.OK && b.Call-d >= r.lastReturn[k] {
			out = append(out, piece{from: from, to: k})
			from = k + 1
		}
	}
	of := make([]int, r.rounds)
	for p := range out {
		for k := out[p].from; k <= out[p].to; k++ {
			of[k] = p
		}
		// Each piece starts from the state the barrier before it
		// showed (the run's first from the quantities before it), an
		// instant before any of its lists, moved, could take effect.
		seen, at := r.initial, -d
		if out[p].from > 0 {
			b := r.barriers[out[p].from-1]
			seen, at = b.Seen, b.Call-d
		}
		out[p].ops = append(out[p].ops, porcupine.Operation{ClientId: r.h.Clients, Input: cinput{pin: true}, Output: coutput{seen: seen}, Call: at - 2, Return: at - 1, Metadata: -1})
	}
	for i := range r.ops {
		if !r.keep[i] {
			continue
		}
		o := &r.ops[i]
		p := &out[of[o.Round]]
		p.ops = append(p.ops, r.operation(i, d))
	}
	return out
}

// operation is request i as porcupine's operation, a list's call moved d
// earlier.
func (r *judgement) operation(i int, d int64) porcupine.Operation {
	o := &r.ops[i]
	call := o.Call
	if o.Kind == List {
		call -= d
	}
	in := cinput{list: o.Kind == List, slot: o.Slot, qty: o.Qty}
	out := coutput{seen: o.Seen, known: o.Known, got: o.Got}
	return porcupine.Operation{ClientId: o.Client, Input: in, Output: out, Call: call, Return: o.ret, Metadata: i}
}

// check checks each piece with porcupine (its lists already moved), on every
// core, until deadline. It returns the pieces found not linearizable (in
// order), how many were not checked in time, how many operations were
// checked and the length of the longest piece.
func (r *judgement) check(pieces []piece, deadline time.Time) (illegal []int, unchecked, ops, longest int) {
	results := make([]porcupine.CheckResult, len(pieces))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				left := time.Until(deadline)
				if left <= 0 {
					results[i] = porcupine.Unknown
					continue
				}
				results[i] = porcupine.CheckOperationsTimeout(r.model, pieces[i].ops, left)
			}
		})
	}
	for i := range pieces {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, res := range results {
		longest = max(longest, len(pieces[i].ops))
		switch res {
		case porcupine.Illegal:
			illegal = append(illegal, i)
		case porcupine.Unknown:
			unchecked++
		}
		if res != porcupine.Unknown {
			ops += len(pieces[i].ops) - 1 // not the pin
		}
	}
	return illegal, unchecked, ops, longest
}

// observe finds the observed staleness: the smallest bound, to the
// millisecond, for which the history passes. The direct rules give a
// bound below which it cannot pass (a list that missed an update answered
// that long before it was sent); the sweep then checks bounds from there,
// doubling until one passes and halving the gap between the largest that
// failed and the smallest that passed, until deadline. passed says
// whether the history passed at d, the bound it was judged against.
func (r *judgement) observe(d int64, passed bool, ex explanation, deadline time.Time) (*time.Duration, string) {
	if ex.always != "" {
		return nil, "none: no staleness bound makes this history pass, since " + ex.always
	}
	const ms = int64(time.Millisecond)
	failMs := ceilDiv(ex.need, ms) - 1 // every bound below need fails
	passMs := int64(-1)
	if passed {
		passMs = ceilDiv(d, ms)
	} else {
		failMs = max(failMs, d/ms)
	}
	try := func(m int64) (ok, known bool) {
		ok, known, _ = r.sweep(m*ms, deadline)
		return ok, known
	}
	// The run's duration bounds the search: a list cannot be older than
	// the run.
	most := max(ceilDiv(int64(r.h.Duration), ms), 1)
	for passMs < 0 {
		m := max(failMs+1, min(2*max(failMs, 1), most))
		if m > most {
			return nil, fmt.Sprintf("none: the history does not pass with a bound of %s, the run's whole duration", msOf(failMs*ms))
		}
		ok, known := try(m)
		switch {
		case !known:
			return nil, fmt.Sprintf("more than %s (a larger bound was not checked in time)", msOf(failMs*ms))
		case ok:
			passMs = m
		default:
			failMs = m
		}
	}
	for passMs-failMs > 1 {
		m := failMs + (passMs-failMs)/2
		ok, known := try(m)
		switch {
		case !known:
			got := time.Duration(passMs * ms)
			return &got, fmt.Sprintf("at most %s (the history passes with it; the bounds between %s and it were not checked in time)", msOf(passMs*ms), msOf(failMs*ms))
		case ok:
			passMs = m
		default:
			failMs = m
		}
	}
	got := time.Duration(passMs * ms)
	if passMs == 0 {
		return &got, "0 (strict: every list showed every update answered before it was sent)"
	}
	return &got, fmt.Sprintf("%s (the smallest bound, to the millisecond, with which the history passes)", msOf(passMs*ms))
}

// pieceOf returns the piece that holds request i.
func (r *judgement) pieceOf(pieces []piece, i int) int {
	for p := range pieces {
		if pieces[p].from <= r.ops[i].Round && r.ops[i].Round <= pieces[p].to {
			return p
		}
	}
	return 0
}

// ceilDiv is a/b rounded up, for a ≥ 0 and b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
