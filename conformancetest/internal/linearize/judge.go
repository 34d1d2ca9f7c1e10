package linearize

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// unknownReturn is the return of a write whose outcome is unknown: the
// end of the history.
const unknownReturn = math.MaxInt64

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
	// MinUpdates is the fewest updates answered 200 (Counts.UpdatesOK)
	// with which a history can pass (the suite's
	// -consistency-min-updates): a thinner one fails with kind
	// ThinHistory, whatever else it shows. Zero sets no minimum.
	MinUpdates int
	// StaleIfError is how old a state a list marked stale (Op.Stale)
	// may show: the deployment's stale-if-error bound, as the suite is
	// told it (-consistency-stale-if-error). Zero: the deployment makes
	// no such promise, and a list marked stale fails with kind
	// UnexpectedStale. Lists not marked stale are judged as ever
	// (strictly, or against Staleness). See stale.go.
	StaleIfError time.Duration
	// Recovery is how long after the last fault of the history ended
	// the deployment may take to answer a strict list and an update
	// with 200 again (the suite's -consistency-recovery): longer, or
	// never, fails with kind NotRecovered (see Recover). Zero judges no
	// recovery.
	Recovery time.Duration
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
	counts     Counts
	recovery   Recovery
}

// smallestFor bounds the search for the smallest set of requests that
// cannot be ordered.
const smallestFor = 10 * time.Second

// Judge judges the history h against the consistency promise, strict or
// within opt.Staleness, and measures its observed staleness. It writes
// nothing: the verdict draws its picture (Verdict.Draw) where its caller
// asks.
//
// Lists marked stale (Op.Stale) are judged apart, against
// opt.StaleIfError, by direct rules (stale.go), and left out of the
// linearizability check; a history with fewer updates answered 200 than
// opt.MinUpdates fails with kind ThinHistory. Each failure names the
// fault it followed (Failure.Fault), and its words say so.
func Judge(h *History, opt Options) Verdict {
	r := prepare(h, opt)
	d := int64(opt.Staleness)
	v := Verdict{Counts: r.counts, Failures: r.noLists(), Recovery: r.recovery, RecoveryWords: RecoveryWords(h, r.recovery, opt.Recovery)}
	ex := r.explain(d)
	v.Failures = append(v.Failures, ex.failures...)
	limit := opt.Limit
	if limit == 0 {
		limit = max(2*h.Duration, 30*time.Second) // room for a busy CI machine
	}
	dec := r.decide(d, limit)
	v.Detail = r.detail(dec.how)
	switch {
	case len(dec.illegal) > 0:
		if !ex.strict {
			v.Failures = append(v.Failures, r.unorderable(d, dec, limit))
		}
	case dec.unchecked > 0:
		// The count of pieces, not of operations: those the checks
		// finished are dec.checked, and the detail says them.
		v.NotJudged = fmt.Sprintf("the linearizability check did not finish in %v: %d of the history's %d pieces not checked; its cost grows with the requests in flight, so fewer clients (-consistency-clients) make it cheaper, and a shorter run (-consistency) has fewer pieces", limit, dec.unchecked, len(dec.pieces))
	case ex.strict:
		// The direct rules are each sufficient for a violation, so
		// porcupine cannot accept what they found in the requests it
		// checked: a bug here.
		v.Failures = append(v.Failures, Failure{Kind: CheckerBug, Pet: -1, Count: 1, Base: -1, Bound: opt.Staleness})
	}
	v.Failures = append(v.Failures, r.thin()...)
	v.Failures = append(v.Failures, r.notRecovered()...)
	if dec.unchecked == 0 {
		v.Observed, v.ObservedWords = r.observe(d, len(dec.illegal) == 0, ex, time.Now().Add(limit))
	} else {
		v.ObservedWords = "not measured: the history was not judged in time"
	}
	for i := range v.Failures {
		f := &v.Failures[i]
		if f.Kind != NotRecovered { // it names the fault it followed itself
			f.Fault = afterFault(h, f)
		}
		f.Problem, f.Expected = Words(h, *f)
	}
	if len(v.Failures) > 0 {
		v.drawing = &drawing{r: r, pieces: dec.pieces, illegal: dec.illegal, limit: limit}
	}
	return v
}

// thin is the failure of a history with fewer updates answered 200 than
// the minimum, none when it has enough.
func (r *judgement) thin() []Failure {
	n, least := r.counts.UpdatesOK, r.opt.MinUpdates
	if n >= least {
		return nil
	}
	return []Failure{{Kind: ThinHistory, Pet: -1, Count: 1, Base: -1, Bound: r.opt.Staleness, Updates: n, MinUpdates: least}}
}

// afterFault returns the fault of h that failure f followed (see
// Failure.Fault): the last applied at or before the latest call among
// its requests, -1 for none.
func afterFault(h *History, f *Failure) int {
	if len(f.Ops) == 0 {
		return -1
	}
	latest := int64(math.MinInt64)
	for _, x := range f.Ops {
		latest = max(latest, h.Ops[x.Index].Call)
	}
	at := -1
	for i, ft := range h.Faults {
		if ft.AppliedNs <= latest && (at < 0 || ft.AppliedNs >= h.Faults[at].AppliedNs) {
			at = i
		}
	}
	return at
}

// noLists finds the base URLs through which no list was answered: their
// requests tell nothing.
func (r *judgement) noLists() []Failure {
	lists, firstFailed := make([]int, len(r.h.Bases)), make([]*op, len(r.h.Bases))
	for i := range r.ops {
		if o := &r.ops[i]; o.Kind == List && o.OK {
			lists[o.Base]++
		} else if o.Kind == List && firstFailed[o.Base] == nil {
			firstFailed[o.Base] = o
		}
	}
	var out []Failure
	for b, n := range lists {
		if n == 0 {
			f := Failure{Kind: NoLists, Pet: -1, Count: 1, Base: b, Bound: r.opt.Staleness}
			if o := firstFailed[b]; o != nil {
				f.Ops = []Involved{{Index: o.idx, Role: RoleFailedList}}
			}
			out = append(out, f)
		}
	}
	return out
}

// decision is what the linearizability check decided: the pieces of the
// history, those found not linearizable (in order), how many were not
// checked in time, how many operations were, with a bound the request no
// order survived (-1 when none), and how it went, in words for Detail.
type decision struct {
	pieces             []piece
	illegal            []int
	unchecked, checked int
	stuck              int
	how                string
}

// decide checks the history for linearizability, each list's call moved d
// earlier, within limit: porcupine for strict histories, the sweep with a
// bound (moved lists overlap too many updates for porcupine's search).
func (r *judgement) decide(d int64, limit time.Duration) decision {
	start := time.Now()
	deadline := start.Add(limit)
	dec := decision{pieces: r.pieces(d), stuck: -1}
	if d == 0 {
		var longest int
		dec.illegal, dec.unchecked, dec.checked, longest = r.check(dec.pieces, deadline)
		dec.how = fmt.Sprintf("%d operations in %d pieces (the longest %d) checked for linearizability in %v: %d not linearizable, %d not checked in time",
			dec.checked, len(dec.pieces), longest, time.Since(start).Round(time.Millisecond), len(dec.illegal), dec.unchecked)
		return dec
	}
	ok, known, at := r.sweep(d, deadline)
	dec.checked = r.counts.Lists - r.counts.StaleLists + r.counts.Updates - r.counts.LeftOut
	switch {
	case !known:
		dec.unchecked = len(dec.pieces)
		dec.how = fmt.Sprintf("%d operations not checked in time for linearizability, each list's call moved %s earlier (the staleness bound)", dec.checked, msOf(d))
		return dec
	case !ok:
		dec.stuck = at
		dec.illegal = []int{r.pieceOf(dec.pieces, at)}
	}
	dec.how = fmt.Sprintf("%d operations checked for linearizability, each list's call moved %s earlier (the staleness bound), in %v: %s",
		dec.checked, msOf(d), time.Since(start).Round(time.Millisecond), map[bool]string{true: "linearizable", false: "not linearizable"}[ok])
	return dec
}

// detail says what was judged and what it cost (how).
func (r *judgement) detail(how string) string {
	h, n := r.h, r.counts
	bases := "1 base URL"
	if len(h.Bases) > 1 {
		bases = fmt.Sprintf("%d base URLs", len(h.Bases))
	}
	stale := ""
	if n.StaleLists > 0 {
		stale = fmt.Sprintf(", %d of them marked stale (judged apart)", n.StaleLists)
	}
	return fmt.Sprintf("%d clients over %s for %v, pets %s: %d requests; %d lists answered 200%s (%d more failed, dropped); "+
		"%d updates: %d answered 200 (%d of them overlapping another client's request), %d of unknown outcome (%d refused, %d shown by no list and left out); %s",
		h.Clients, bases, h.Duration, petNames(h), n.Operations, n.Lists, stale, n.FailedLists,
		n.Updates, n.UpdatesOK, n.Overlapped, n.Unknown, n.Refused, n.LeftOut, how)
}

// unorderable is the failure of a history that porcupine (or the sweep)
// found no order of though no direct rule names a cause: the first piece
// not linearizable, and the smallest set of its requests found that
// cannot be ordered.
func (r *judgement) unorderable(d int64, dec decision, limit time.Duration) Failure {
	f := Failure{Kind: Unorderable, Pet: -1, Count: 1, Base: -1, Bound: time.Duration(d), Pieces: len(dec.illegal), OfPieces: len(dec.pieces)}
	first := dec.pieces[dec.illegal[0]].ops
	f.Span = [2]int64{first[0].Return, first[len(first)-1].Return}
	if dec.stuck >= 0 {
		f.Ops = append(f.Ops, Involved{Index: dec.stuck, Role: RoleStuck})
	}
	set, pet := r.smallest(first, time.Now().Add(min(limit, smallestFor)))
	if set == nil {
		return f
	}
	f.Pet = pet
	for _, o := range set {
		if o.Metadata == -1 {
			from := o.Output.(coutput).seen
			f.From = slices.Clone(from[:len(r.h.Pets)])
			continue
		}
		f.Ops = append(f.Ops, Involved{Index: o.Metadata.(int), Role: RoleMember})
	}
	return f
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
		r.ops[i] = op{Op: o, ret: o.Return, idx: i}
	}
	r.counts = Counts{Operations: len(h.Ops), Overlapped: overlapped(h)}
	for i := range r.ops {
		o := &r.ops[i]
		r.rounds = max(r.rounds, o.Round+1)
		r.count(o)
		if o.Kind == Update {
			r.writes[o.Qty] = o
			if !o.Known {
				o.ret = unknownReturn
			}
		}
	}
	r.keepAndReach(r.firstSeen())
	r.recovery = Recover(h)
	return r
}

// count counts request o in r.counts (but Overlapped and LeftOut).
func (r *judgement) count(o *op) {
	n := &r.counts
	switch {
	case o.Kind == Update:
		n.Updates++
		switch {
		case o.Known:
			n.UpdatesOK++
		case o.Refused:
			n.Unknown++
			n.Refused++
		default:
			n.Unknown++
		}
	case o.OK:
		n.Lists++
		if o.Stale {
			n.StaleLists++
		}
	default:
		n.FailedLists++
	}
}

// seen is when a value written was first shown: the return and the round
// of the first list that showed it.
type seen struct {
	ret   int64
	round int
}

// firstSeen finds the first list that showed each value written, and the
// rounds' barriers.
func (r *judgement) firstSeen() map[int64]seen {
	first := map[int64]seen{}
	r.barriers = make([]*op, r.rounds)
	for i := range r.ops {
		o := &r.ops[i]
		if o.Barrier {
			r.barriers[o.Round] = o
		}
		if o.Kind != List || !o.OK || o.Stale {
			continue // a list marked stale is judged apart (stale.go)
		}
		for s, q := range o.Seen[:len(r.h.Pets)] {
			if w := r.writes[q]; w != nil && w.Slot == s {
				if t, ok := first[q]; !ok || o.ret < t.ret {
					first[q] = seen{o.ret, o.Round}
				}
			}
		}
	}
	return first
}

// keepAndReach marks the requests the model keeps, gives each update of
// unknown outcome the return of the first list that showed it, and finds
// each round's reach and last return.
func (r *judgement) keepAndReach(firstSeen map[int64]seen) {
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
		case o.Kind == List && (!o.OK || o.Stale):
			// Failed lists tell nothing; lists marked stale may be
			// seconds old, far beyond a piece, and are judged apart.
			r.keep[i] = false
			continue
		case o.Kind == Update && !o.Known:
			t, ok := firstSeen[o.Qty]
			if !ok {
				r.counts.LeftOut++
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
// joins rounds, which is correct but slower.) A barrier marked stale
// pins nothing: its state may be older than its round's requests.
func (r *judgement) pieces(d int64) []piece {
	var out []piece
	from, far := 0, 0
	for k := range r.rounds {
		far = max(far, r.reach[k])
		b := r.barriers[k]
		if k == r.rounds-1 || far <= k && b != nil && b.OK && !b.Stale && b.Call-d >= r.lastReturn[k] {
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
		return nil, "none: no staleness bound makes this history pass, since " + alwaysWords[ex.always]
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
