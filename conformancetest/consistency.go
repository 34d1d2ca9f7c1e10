package conformancetest

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// The history of the consistency run is checked in two ways that agree:
//
//   - porcupine, the linearizability checker etcd's robustness tests use,
//     decides whether one order of every request exists, each at an
//     instant between its call and its return, that a single copy of the
//     inventory could have produced. It gives the verdict and the picture.
//   - Direct rules, each sufficient for a violation, name what happened
//     in words: a list older than an update answered before it was sent,
//     a value never written, a list of two instants, an update that
//     answered another write.
//
// The model keeps lists whole: its state is the quantities of the few
// pets in play, a list is one read of all of them, an update one write.
// Every write uses a quantity of its own, so a value read names the write
// that made it. An update with an unknown outcome (no answer, cut off,
// 503) may have taken effect at any instant after its call, as etcd
// models it; before checking, its return is moved to that of the first
// list that showed its value (it took effect before that list answered),
// and one that no list showed is left out (taking effect at the very
// end, after every read, is always possible, so it constrains nothing).
// Both steps keep the verdict and shrink the search.

// unknownReturn is the return of a write whose outcome is unknown: the
// end of the history.
const unknownReturn = math.MaxInt64

// cinput and coutput are an operation's input and output in the model.
type cinput struct {
	pin  bool // sets the state a piece of the history starts from
	list bool
	slot int
	qty  int64
}

type coutput struct {
	seen  cstate // a list, or a pin
	known bool   // an update answered 200 with an item
	got   int64  // its quantity
}

// cstate is the quantities of the pets in play.
type cstate [consistencyPets]int64

// verdict is the judgement of a history.
type verdict struct {
	failures  []string
	notJudged string // why there is no verdict (the checker ran out of time)
	detail    string
	picture   string // the file the picture was written to
}

// judge checks the history ops (ordered by call).
func (r *consistencyRun) judge(ops []cop) verdict {
	var v verdict
	initial := cstate{}
	for i, p := range r.pets {
		initial[i] = p.qty
	}
	// Which write made each value, and the first list that showed it.
	writes := map[int64]*cop{}
	var nLists, nUpdates, nUnknown, nFailedLists, rounds int
	for i := range ops {
		o := &ops[i]
		rounds = max(rounds, o.round+1)
		switch {
		case o.kind == opUpdate:
			writes[o.qty] = o
			nUpdates++
			if !o.known {
				nUnknown++
				o.ret = unknownReturn
			}
		case o.ok:
			nLists++
		default:
			nFailedLists++
		}
	}
	type seen struct {
		ret   int64
		round int
	}
	firstSeen := map[int64]seen{}
	barriers := make([]*cop, rounds)
	for i := range ops {
		o := &ops[i]
		if o.barrier {
			barriers[o.round] = o
		}
		if o.kind != opList || !o.ok {
			continue
		}
		for s, q := range o.seen[:len(r.pets)] {
			if w := writes[q]; w != nil && w.slot == s {
				if t, ok := firstSeen[q]; !ok || o.ret < t.ret {
					firstSeen[q] = seen{o.ret, o.round}
				}
			}
		}
	}
	// The unknown writes patched, and how far each round reaches: a
	// write of unknown outcome first shown in a later round joins the
	// rounds between into one piece.
	reach := make([]int, rounds)
	for k := range reach {
		reach[k] = k
	}
	var dropped int
	keep := make([]bool, len(ops))
	for i := range ops {
		o := &ops[i]
		keep[i] = true
		switch {
		case o.kind == opList && !o.ok:
			keep[i] = false
		case o.kind == opUpdate && !o.known:
			t, ok := firstSeen[o.qty]
			if !ok {
				dropped++
				keep[i] = false
				continue
			}
			o.ret = t.ret
			reach[o.round] = max(reach[o.round], t.round)
		}
	}
	// Pieces: runs of rounds cut where a barrier list was answered and
	// nothing of an earlier round reaches past it.
	piece := make([]int, rounds)
	for k, n, far := 0, 0, 0; k < rounds; k++ {
		piece[k] = n
		far = max(far, reach[k])
		if far <= k && barriers[k] != nil && barriers[k].ok {
			n++
		}
	}
	var pieces [][]porcupine.Operation
	pin := func(seen cstate, at int64) porcupine.Operation {
		return porcupine.Operation{ClientId: r.c.rn.cfg.ConsistencyClients, Input: cinput{pin: true}, Output: coutput{seen: seen}, Call: at - 2, Return: at - 1, Metadata: -1}
	}
	for i := range ops {
		o := &ops[i]
		if !keep[i] {
			continue
		}
		p := piece[o.round]
		for len(pieces) <= p {
			// Each piece starts from the state the barrier before it
			// showed (the run's first from the quantities before it).
			if len(pieces) == 0 {
				pieces = append(pieces, []porcupine.Operation{pin(initial, 0)})
				continue
			}
			k := slices.Index(piece, len(pieces)) - 1
			pieces = append(pieces, []porcupine.Operation{pin(barriers[k].seen, barriers[k].answered+1)})
		}
		in := cinput{list: o.kind == opList, slot: o.slot, qty: o.qty}
		out := coutput{seen: o.seen, known: o.known, got: o.got}
		pieces[p] = append(pieces[p], porcupine.Operation{ClientId: o.client, Input: in, Output: out, Call: o.call, Return: o.ret, Metadata: i})
	}
	findings := r.explain(ops, writes, initial)
	for _, f := range findings {
		v.failures = append(v.failures, f.words)
	}

	model := r.model()
	limit := r.checkLimit
	if limit == 0 {
		limit = max(2*r.until, 30*time.Second) // room for a busy CI machine
	}
	start := time.Now()
	illegal, unchecked, checked, longest := checkPieces(model, pieces, start.Add(limit))
	took := time.Since(start)
	bases := "1 base URL"
	if len(r.bases) > 1 {
		bases = fmt.Sprintf("%d base URLs", len(r.bases))
	}
	v.detail = fmt.Sprintf("%d clients over %s for %v, pets %s: %d lists (%d more failed, dropped), %d updates (%d of unknown outcome, %d of them shown by no list and left out); "+
		"%d operations in %d pieces (the longest %d) checked for linearizability in %v: %d not linearizable, %d not checked in time",
		r.c.rn.cfg.ConsistencyClients, bases, r.until, r.petNames(), nLists, nFailedLists, nUpdates, nUnknown, dropped,
		checked, len(pieces), longest, took.Round(time.Millisecond), len(illegal), unchecked)
	switch {
	case len(illegal) > 0:
		if len(findings) == 0 {
			v.failures = append(v.failures, fmt.Sprintf("no order of the requests, each at an instant between its call and its return, could have been produced by one copy of the inventory (porcupine found none in %d of %d pieces of the history, the first from %s to %s), "+
				"though no single list or update breaks a rule on its own: see the picture (-consistency-html) for how far the best order got",
				len(illegal), len(pieces), at(pieces[illegal[0]][0].Return), at(pieces[illegal[0]][len(pieces[illegal[0]])-1].Return)))
		}
	case unchecked > 0:
		v.notJudged = fmt.Sprintf("the linearizability check of %d pieces of the history (%d operations) did not finish in %v; check a shorter run (-consistency) or fewer clients (-consistency-clients)", unchecked, checked, limit)
	case len(findings) > 0:
		// The direct rules are each sufficient for a violation, so
		// porcupine cannot accept what they found: a bug here.
		v.failures = append(v.failures, "conformancetest bug: porcupine accepted a history that the direct rules reject; the rules' findings above stand")
	}
	if len(v.failures) > 0 && r.c.rn.cfg.ConsistencyHTML != "" {
		if err := r.draw(model, pieces, illegal, findings, limit); err != nil {
			v.failures = append(v.failures, fmt.Sprintf("the picture could not be written to %s: %v", r.c.rn.cfg.ConsistencyHTML, err))
		} else {
			v.picture = r.c.rn.cfg.ConsistencyHTML
		}
	}
	return v
}

// checkPieces checks each piece of the history with porcupine, on every
// core, until deadline. It returns the pieces found not linearizable (in
// order), how many were not checked in time, how many operations were
// checked and the length of the longest piece.
func checkPieces(model porcupine.Model, pieces [][]porcupine.Operation, deadline time.Time) (illegal []int, unchecked, ops, longest int) {
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
				results[i] = porcupine.CheckOperationsTimeout(model, pieces[i], left)
			}
		})
	}
	for i := range pieces {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, res := range results {
		longest = max(longest, len(pieces[i]))
		switch res {
		case porcupine.Illegal:
			illegal = append(illegal, i)
		case porcupine.Unknown:
			unchecked++
		}
		if res != porcupine.Unknown {
			ops += len(pieces[i]) - 1 // not the pin
		}
	}
	return illegal, unchecked, ops, longest
}

func (r *consistencyRun) petNames() string {
	var ids []string
	for _, p := range r.pets {
		ids = append(ids, fmt.Sprint(p.id))
	}
	return strings.Join(ids, ", ")
}

// mstate is the model's state: the quantities of the pets in play, once
// a piece's pin has set them.
type mstate struct {
	q   cstate
	set bool
}

// model is the inventory of the pets in play as porcupine sees it.
func (r *consistencyRun) model() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return mstate{} },
		Step: func(state, input, output any) (bool, any) {
			st, in, out := state.(mstate), input.(cinput), output.(coutput)
			switch {
			case in.pin:
				return !st.set, mstate{q: out.seen, set: true}
			case !st.set:
				return false, st
			case in.list:
				return out.seen == st.q, st
			case out.known && out.got != in.qty:
				return false, st
			}
			st.q[in.slot] = in.qty
			return true, st
		},
		Hash: func(state any) uint64 {
			st := state.(mstate)
			h := uint64(14695981039346656037)
			for _, q := range st.q {
				h ^= uint64(q)
				h *= 1099511628211
			}
			return h
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(cinput), output.(coutput)
			switch {
			case in.pin:
				return "state at the barrier " + r.describeState(out.seen)
			case in.list:
				return "list " + r.describeState(out.seen)
			case !out.known:
				return fmt.Sprintf("pet %d := %d (outcome unknown)", r.pets[in.slot].id, in.qty)
			}
			return fmt.Sprintf("pet %d := %d → %d", r.pets[in.slot].id, in.qty, out.got)
		},
		DescribeState: func(state any) string { return r.describeState(state.(mstate).q) },
	}
}

func (r *consistencyRun) describeState(st cstate) string {
	var parts []string
	for i, p := range r.pets {
		if st[i] == -1 {
			parts = append(parts, fmt.Sprintf("%d: missing", p.id))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d: %d", p.id, st[i]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// finding is one violation the direct rules found, with the request that
// shows it, for the words and the picture.
type finding struct {
	words string
	op    *cop
	count int
}

// explain applies the direct rules, each sufficient for a violation, and
// returns one finding per rule broken: the first case in words, and how
// many there were (per base URL for stale lists).
func (r *consistencyRun) explain(ops []cop, writes map[int64]*cop, initial cstate) []finding {
	// Per pet, the updates answered 200 with their own quantity, by
	// call, with the earliest return of those from each index on.
	type known struct {
		calls, rets, sufMin []int64
		ops                 []*cop
	}
	per := make([]known, len(r.pets))
	for i := range ops {
		o := &ops[i]
		if o.kind == opUpdate && o.known && o.got == o.qty {
			k := &per[o.slot]
			k.calls = append(k.calls, o.call)
			k.rets = append(k.rets, o.ret)
			k.ops = append(k.ops, o)
		}
	}
	for s := range per {
		k := &per[s]
		k.sufMin = make([]int64, len(k.rets)+1)
		k.sufMin[len(k.rets)] = math.MaxInt64
		for j := len(k.rets) - 1; j >= 0; j-- {
			k.sufMin[j] = min(k.rets[j], k.sufMin[j+1])
		}
	}
	// firstAfter returns the earliest return of a known update of slot s
	// called after t (math.MaxInt64 when none).
	firstAfter := func(s int, t int64) int64 {
		k := &per[s]
		j, _ := slices.BinarySearch(k.calls, t+1)
		return k.sufMin[j]
	}
	// latestBefore returns the known update of slot s called after t
	// that returned last before u: the freshest write a list missed.
	latestBefore := func(s int, t, u int64) *cop {
		var best *cop
		k := &per[s]
		j, _ := slices.BinarySearch(k.calls, t+1)
		for ; j < len(k.ops); j++ {
			if w := k.ops[j]; w.ret < u && (best == nil || w.ret > best.ret) {
				best = w
			}
		}
		return best
	}
	// writtenBy returns the write that made q, for pet s, and whether
	// one did (or q is the quantity before the run).
	writtenBy := func(s int, q int64) (*cop, bool) {
		if q == initial[s] {
			return nil, true
		}
		w := writes[q]
		if w == nil || w.slot != s {
			return nil, false
		}
		return w, true
	}
	// after is the instant a value is known to have been written by:
	// the write's return (for an unknown outcome, the first list that
	// showed it), or before the run.
	after := func(w *cop) int64 {
		if w == nil {
			return math.MinInt64
		}
		return w.ret
	}
	var (
		other, never, missing, future, stale, mixed finding
		staleByBase                                 = make([]int, len(r.bases))
	)
	note := func(f *finding, o *cop, words func() string) {
		if f.count == 0 {
			f.op, f.words = o, words()
		}
		f.count++
	}
	for i := range ops {
		o := &ops[i]
		if o.kind == opUpdate {
			if o.known && o.got != o.qty {
				note(&other, o, func() string {
					made := "a quantity no write of the run sent"
					if w := writes[o.got]; w != nil {
						made = fmt.Sprintf("the write of %s", r.describeOp(w))
					} else if o.got == initial[o.slot] {
						made = "the quantity before the run"
					}
					return fmt.Sprintf("%s carried quantity %d, not its own write: %s", r.describeOp(o), o.got, made)
				})
			}
			continue
		}
		if !o.ok {
			continue
		}
		latestCall, latestSlot := int64(math.MinInt64), -1
		broken := false
		for s, q := range o.seen[:len(r.pets)] {
			pet := r.pets[s].id
			if q == -1 {
				note(&missing, o, func() string {
					return fmt.Sprintf("%s lacked pet %d, which the run only updated (entries are never removed through the API)", r.describeOp(o), pet)
				})
				broken = true
				continue
			}
			w, ok := writtenBy(s, q)
			if !ok {
				note(&never, o, func() string {
					return fmt.Sprintf("%s showed pet %d at quantity %d, a write that was never made (no update of the run sent it to pet %d, and it was not the quantity before)", r.describeOp(o), pet, q, pet)
				})
				broken = true
				continue
			}
			if w != nil && w.call > o.ret {
				note(&future, o, func() string {
					return fmt.Sprintf("%s showed pet %d at quantity %d, written by %s: a write sent after the list was answered", r.describeOp(o), pet, q, r.describeOp(w))
				})
				broken = true
				continue
			}
			if firstAfter(s, after(w)) < o.call {
				missed := latestBefore(s, after(w), o.call)
				if broken {
					continue // one stale pet names the list
				}
				note(&stale, o, func() string {
					was := "the quantity before the run"
					if w != nil {
						was = "written by " + r.describeOp(w)
					}
					return fmt.Sprintf("%s showed pet %d at quantity %d (%s) and so missed %s, answered %s before the list was sent",
						r.describeOp(o), pet, q, was, r.describeOp(missed), msOf(o.call-missed.ret))
				})
				if !broken {
					staleByBase[o.base]++ // once per list
				}
				broken = true
				continue
			}
			if w != nil && w.call > latestCall {
				latestCall, latestSlot = w.call, s
			}
		}
		if broken || latestSlot < 0 {
			continue
		}
		// One instant: no pet may show a value that an update answered
		// before the newest value's write was even sent had replaced.
		for s, q := range o.seen[:len(r.pets)] {
			if s == latestSlot {
				continue
			}
			w, _ := writtenBy(s, q)
			if firstAfter(s, after(w)) < latestCall {
				newest := writes[o.seen[latestSlot]]
				missed := latestBefore(s, after(w), latestCall)
				note(&mixed, o, func() string {
					return fmt.Sprintf("%s mixed two instants: it showed pet %d at %d, written by %s, and pet %d at %d although %s, answered before that write was sent, had replaced it",
						r.describeOp(o), r.pets[latestSlot].id, o.seen[latestSlot], r.describeOp(newest), r.pets[s].id, q, r.describeOp(missed))
				})
				break
			}
		}
	}
	var out []finding
	for _, f := range []*finding{&stale, &mixed, &future, &never, &missing, &other} {
		if f.count == 0 {
			continue
		}
		if f.count > 1 {
			f.words = fmt.Sprintf("%d such requests; the first: %s", f.count, f.words)
		}
		if f == &stale {
			var by []string
			for b, n := range staleByBase {
				by = append(by, fmt.Sprintf("%s: %d", r.bases[b], n))
			}
			f.words += "; stale lists by base URL: " + strings.Join(by, ", ")
		}
		out = append(out, *f)
	}
	return out
}

// draw writes porcupine's picture of the pieces of the history found not
// linearizable (the first few: a page that opens fast), or of every piece
// when none was (a direct rule found what porcupine had no time to), with
// the violations marked, to Config.ConsistencyHTML.
func (r *consistencyRun) draw(model porcupine.Model, pieces [][]porcupine.Operation, illegal []int, findings []finding, limit time.Duration) error {
	const most = 3
	var hist []porcupine.Operation
	var bounds []int
	show := illegal
	if len(show) == 0 {
		show = make([]int, len(pieces))
		for i := range show {
			show[i] = i
		}
	}
	for _, i := range show[:min(most, len(show))] {
		hist = append(hist, pieces[i]...)
		bounds = append(bounds, len(hist))
	}
	model.Partition = func(h []porcupine.Operation) [][]porcupine.Operation {
		var out [][]porcupine.Operation
		from := 0
		for _, to := range bounds {
			out = append(out, h[from:to])
			from = to
		}
		return out
	}
	res, info := porcupine.CheckOperationsVerbose(model, hist, limit)
	var notes []porcupine.Annotation
	first, last := hist[0].Call, int64(math.MinInt64)
	for _, op := range hist {
		last = max(last, op.Return)
	}
	for _, f := range findings {
		if f.op.call < first || f.op.answered > last {
			continue // in a piece not shown
		}
		notes = append(notes, porcupine.Annotation{ClientId: f.op.client, Start: f.op.call, End: f.op.answered,
			Description: "violation", Details: f.words, BackgroundColor: "#f4c7c3"})
	}
	if res == porcupine.Unknown {
		notes = append(notes, porcupine.Annotation{Tag: "checker", Description: "the checker ran out of time: the linearizations shown are partial"})
	}
	info.AddAnnotations(notes)
	f, err := os.Create(r.c.rn.cfg.ConsistencyHTML)
	if err != nil {
		return err
	}
	if err := porcupine.Visualize(model, info, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
