package linearize

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
type cstate [MaxPets]int64

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

// linearizable is what the promise expects of every request.
const linearizable = "every request to appear to take effect at one instant between its call and its return, on one copy of the inventory (CONTRACT.md §Consistency)"

// Options are how a history is judged.
type Options struct {
	// Limit bounds the linearizability check; zero is the history's
	// duration twice, at least 30 s. A check cut short is not judged.
	Limit time.Duration
	// Picture, when not empty, is the file that porcupine's picture of
	// a failed history is written to.
	Picture string
}

// judgement is one history being judged.
type judgement struct {
	h   *History
	opt Options
}

// Judge judges the history h against the consistency promise.
func Judge(h *History, opt Options) Verdict {
	r := &judgement{h: h, opt: opt}
	ops := make([]op, len(h.Ops))
	for i, o := range h.Ops {
		ops[i] = op{Op: o, ret: o.Return}
	}
	return r.judge(ops)
}

// judge checks the history ops (ordered by call).
func (r *judgement) judge(ops []op) Verdict {
	var v Verdict
	initial := cstate{}
	for i, p := range r.h.Pets {
		initial[i] = p.Qty
	}
	// Which write made each value, and the first list that showed it.
	writes := map[int64]*op{}
	var nLists, nUpdates, nUnknown, nFailedLists, rounds int
	for i := range ops {
		o := &ops[i]
		rounds = max(rounds, o.Round+1)
		switch {
		case o.Kind == Update:
			writes[o.Qty] = o
			nUpdates++
			if !o.Known {
				nUnknown++
				o.ret = unknownReturn
			}
		case o.OK:
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
	barriers := make([]*op, rounds)
	for i := range ops {
		o := &ops[i]
		if o.Barrier {
			barriers[o.Round] = o
		}
		if o.Kind != List || !o.OK {
			continue
		}
		for s, q := range o.Seen[:len(r.h.Pets)] {
			if w := writes[q]; w != nil && w.Slot == s {
				if t, ok := firstSeen[q]; !ok || o.ret < t.ret {
					firstSeen[q] = seen{o.ret, o.Round}
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
		case o.Kind == List && !o.OK:
			keep[i] = false
		case o.Kind == Update && !o.Known:
			t, ok := firstSeen[o.Qty]
			if !ok {
				dropped++
				keep[i] = false
				continue
			}
			o.ret = t.ret
			reach[o.Round] = max(reach[o.Round], t.round)
		}
	}
	// Pieces: runs of rounds cut where a barrier list was answered and
	// nothing of an earlier round reaches past it.
	piece := make([]int, rounds)
	for k, n, far := 0, 0, 0; k < rounds; k++ {
		piece[k] = n
		far = max(far, reach[k])
		if far <= k && barriers[k] != nil && barriers[k].OK {
			n++
		}
	}
	var pieces [][]porcupine.Operation
	pin := func(seen cstate, at int64) porcupine.Operation {
		return porcupine.Operation{ClientId: r.h.Clients, Input: cinput{pin: true}, Output: coutput{seen: seen}, Call: at - 2, Return: at - 1, Metadata: -1}
	}
	for i := range ops {
		o := &ops[i]
		if !keep[i] {
			continue
		}
		p := piece[o.Round]
		for len(pieces) <= p {
			// Each piece starts from the state the barrier before it
			// showed (the run's first from the quantities before it).
			if len(pieces) == 0 {
				pieces = append(pieces, []porcupine.Operation{pin(initial, 0)})
				continue
			}
			k := slices.Index(piece, len(pieces)) - 1
			pieces = append(pieces, []porcupine.Operation{pin(barriers[k].Seen, barriers[k].Return+1)})
		}
		in := cinput{list: o.Kind == List, slot: o.Slot, qty: o.Qty}
		out := coutput{seen: o.Seen, known: o.Known, got: o.Got}
		pieces[p] = append(pieces[p], porcupine.Operation{ClientId: o.Client, Input: in, Output: out, Call: o.Call, Return: o.ret, Metadata: i})
	}
	// Every base URL must have answered lists, or its requests tell
	// nothing.
	lists, whyNot := make([]int, len(r.h.Bases)), make([]string, len(r.h.Bases))
	for i := range ops {
		if o := &ops[i]; o.Kind == List && o.OK {
			lists[o.Base]++
		} else if o.Kind == List && whyNot[o.Base] == "" {
			whyNot[o.Base] = o.Answer
		}
	}
	for b, n := range lists {
		if n == 0 {
			v.fail("lists answered 200 through every base URL of the deployment",
				"no list through %s was answered in %v (the first: %s): its requests tell nothing, so the deployment cannot be judged consistent through it", r.h.Bases[b], r.h.Duration, whyNot[b])
		}
	}
	findings := r.explain(ops, writes, initial)
	for _, f := range findings {
		v.fail(linearizable, "%s", f.words)
	}

	model := r.model()
	limit := r.opt.Limit
	if limit == 0 {
		limit = max(2*r.h.Duration, 30*time.Second) // room for a busy CI machine
	}
	start := time.Now()
	illegal, unchecked, checked, longest := checkPieces(model, pieces, start.Add(limit))
	took := time.Since(start)
	bases := "1 base URL"
	if len(r.h.Bases) > 1 {
		bases = fmt.Sprintf("%d base URLs", len(r.h.Bases))
	}
	v.Detail = fmt.Sprintf("%d clients over %s for %v, pets %s: %d lists (%d more failed, dropped), %d updates (%d of unknown outcome, %d of them shown by no list and left out); "+
		"%d operations in %d pieces (the longest %d) checked for linearizability in %v: %d not linearizable, %d not checked in time",
		r.h.Clients, bases, r.h.Duration, r.petNames(), nLists, nFailedLists, nUpdates, nUnknown, dropped,
		checked, len(pieces), longest, took.Round(time.Millisecond), len(illegal), unchecked)
	switch {
	case len(illegal) > 0:
		if len(findings) == 0 {
			v.fail(linearizable, "no order of the requests, each at an instant between its call and its return, could have been produced by one copy of the inventory (porcupine found none in %d of %d pieces of the history, the first from %s to %s), "+
				"though no single list or update breaks a rule on its own: see the picture (-consistency-html) for how far the best order got",
				len(illegal), len(pieces), at(pieces[illegal[0]][0].Return), at(pieces[illegal[0]][len(pieces[illegal[0]])-1].Return))
		}
	case unchecked > 0:
		v.NotJudged = fmt.Sprintf("the linearizability check of %d pieces of the history (%d operations) did not finish in %v; check a shorter run (-consistency) or fewer clients (-consistency-clients)", unchecked, checked, limit)
	case len(findings) > 0:
		// The direct rules are each sufficient for a violation, so
		// porcupine cannot accept what they found: a bug here.
		v.fail(linearizable, "conformancetest bug: porcupine accepted a history that the direct rules reject; the rules' findings above stand")
	}
	if len(v.Failures) > 0 && r.opt.Picture != "" {
		if err := r.draw(model, pieces, illegal, findings, limit); err != nil {
			v.fail("the picture of the history written", "the picture could not be written to %s: %v", r.opt.Picture, err)
		} else {
			v.Picture = r.opt.Picture
		}
	}
	return v
}

func (v *Verdict) fail(expected, format string, args ...any) {
	v.Failures = append(v.Failures, Failure{Problem: fmt.Sprintf(format, args...), Expected: expected})
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

// mstate is the model's state: the quantities of the pets in play, once
// a piece's pin has set them.
type mstate struct {
	q   cstate
	set bool
}

// model is the inventory of the pets in play as porcupine sees it.
func (r *judgement) model() porcupine.Model {
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
				return fmt.Sprintf("pet %d := %d (outcome unknown)", r.h.Pets[in.slot].ID, in.qty)
			}
			return fmt.Sprintf("pet %d := %d → %d", r.h.Pets[in.slot].ID, in.qty, out.got)
		},
		DescribeState: func(state any) string { return r.describeState(state.(mstate).q) },
	}
}

func (r *judgement) describeState(st cstate) string {
	var parts []string
	for i, p := range r.h.Pets {
		if st[i] == -1 {
			parts = append(parts, fmt.Sprintf("%d: missing", p.ID))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d: %d", p.ID, st[i]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// finding is one violation the direct rules found, with the request that
// shows it, for the words and the picture.
type finding struct {
	words string
	op    *op
	count int
}

// explain applies the direct rules, each sufficient for a violation, and
// returns one finding per rule broken: the first case in words, and how
// many there were (per base URL for stale lists).
func (r *judgement) explain(ops []op, writes map[int64]*op, initial cstate) []finding {
	// Per pet, the updates answered 200 with their own quantity, by
	// call, with the earliest return of those from each index on.
	type known struct {
		calls, rets, sufMin []int64
		ops                 []*op
	}
	per := make([]known, len(r.h.Pets))
	for i := range ops {
		o := &ops[i]
		if o.Kind == Update && o.Known && o.Got == o.Qty {
			k := &per[o.Slot]
			k.calls = append(k.calls, o.Call)
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
	latestBefore := func(s int, t, u int64) *op {
		var best *op
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
	writtenBy := func(s int, q int64) (*op, bool) {
		if q == initial[s] {
			return nil, true
		}
		w := writes[q]
		if w == nil || w.Slot != s {
			return nil, false
		}
		return w, true
	}
	// after is the instant a value is known to have been written by:
	// the write's return (for an unknown outcome, the first list that
	// showed it), or before the run.
	after := func(w *op) int64 {
		if w == nil {
			return math.MinInt64
		}
		return w.ret
	}
	var (
		other, never, missing, future, stale, mixed finding
		staleByBase                                 = make([]int, len(r.h.Bases))
	)
	note := func(f *finding, o *op, words func() string) {
		if f.count == 0 {
			f.op, f.words = o, words()
		}
		f.count++
	}
	for i := range ops {
		o := &ops[i]
		if o.Kind == Update {
			if o.Known && o.Got != o.Qty {
				note(&other, o, func() string {
					made := "a quantity no write of the run sent"
					if w := writes[o.Got]; w != nil {
						made = fmt.Sprintf("the write of %s", r.describeOp(w))
					} else if o.Got == initial[o.Slot] {
						made = "the quantity before the run"
					}
					return fmt.Sprintf("%s carried quantity %d, not its own write: %s", r.describeOp(o), o.Got, made)
				})
			}
			continue
		}
		if !o.OK {
			continue
		}
		latestCall, latestSlot := int64(math.MinInt64), -1
		broken := false
		for s, q := range o.Seen[:len(r.h.Pets)] {
			pet := r.h.Pets[s].ID
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
			if w != nil && w.Call > o.ret {
				note(&future, o, func() string {
					return fmt.Sprintf("%s showed pet %d at quantity %d, written by %s: a write sent after the list was answered", r.describeOp(o), pet, q, r.describeOp(w))
				})
				broken = true
				continue
			}
			if firstAfter(s, after(w)) < o.Call {
				missed := latestBefore(s, after(w), o.Call)
				if broken {
					continue // one stale pet names the list
				}
				note(&stale, o, func() string {
					was := "the quantity before the run"
					if w != nil {
						was = "written by " + r.describeOp(w)
					}
					return fmt.Sprintf("%s showed pet %d at quantity %d (%s) and so missed %s, answered %s before the list was sent",
						r.describeOp(o), pet, q, was, r.describeOp(missed), msOf(o.Call-missed.ret))
				})
				if !broken {
					staleByBase[o.Base]++ // once per list
				}
				broken = true
				continue
			}
			if w != nil && w.Call > latestCall {
				latestCall, latestSlot = w.Call, s
			}
		}
		if broken || latestSlot < 0 {
			continue
		}
		// One instant: no pet may show a value that an update answered
		// before the newest value's write was even sent had replaced.
		for s, q := range o.Seen[:len(r.h.Pets)] {
			if s == latestSlot {
				continue
			}
			w, _ := writtenBy(s, q)
			if firstAfter(s, after(w)) < latestCall {
				newest := writes[o.Seen[latestSlot]]
				missed := latestBefore(s, after(w), latestCall)
				note(&mixed, o, func() string {
					return fmt.Sprintf("%s mixed two instants: it showed pet %d at %d, written by %s, and pet %d at %d although %s, answered before that write was sent, had replaced it",
						r.describeOp(o), r.h.Pets[latestSlot].ID, o.Seen[latestSlot], r.describeOp(newest), r.h.Pets[s].ID, q, r.describeOp(missed))
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
				by = append(by, fmt.Sprintf("%s: %d", r.h.Bases[b], n))
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
func (r *judgement) draw(model porcupine.Model, pieces [][]porcupine.Operation, illegal []int, findings []finding, limit time.Duration) error {
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
		if f.op.Call < first || f.op.Return > last {
			continue // in a piece not shown
		}
		notes = append(notes, porcupine.Annotation{ClientId: f.op.Client, Start: f.op.Call, End: f.op.Return,
			Description: "violation", Details: f.words, BackgroundColor: "#f4c7c3"})
	}
	if res == porcupine.Unknown {
		notes = append(notes, porcupine.Annotation{Tag: "checker", Description: "the checker ran out of time: the linearizations shown are partial"})
	}
	info.AddAnnotations(notes)
	f, err := os.Create(r.opt.Picture)
	if err != nil {
		return err
	}
	if err := porcupine.Visualize(model, info, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
