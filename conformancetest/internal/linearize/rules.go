package linearize

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// finding is one violation the direct rules found, with the request that
// shows it, for the words and the picture.
type finding struct {
	words string
	op    *op
	count int
}

// explanation is what the direct rules found.
type explanation struct {
	// findings are the rules broken with the staleness bound judged
	// against, one each: the first case in words, and how many there
	// were (per base URL for stale lists).
	findings []finding
	// need is the smallest staleness bound that no list breaks a rule
	// against: below it the history cannot pass.
	need int64
	// always names a rule broken whatever the bound ("" when none): no
	// staleness makes the history pass.
	always string
}

// explain applies the direct rules, each sufficient for a violation, with
// each list's call moved d earlier (the staleness bound).
func (r *judgement) explain(d int64) explanation {
	ops, writes, initial := r.ops, r.writes, r.initial
	var ex explanation
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
	// Per pet, the writes lists showed, by the return of the list that
	// showed them, with the newest write (by call) shown by each
	// return on: a list sent after a list that showed a write was
	// answered must show it, or a later one.
	type shownAt struct {
		ret  int64 // when the list that showed it was answered
		list *op
		w    *op
	}
	shown := make([][]shownAt, len(r.h.Pets))
	for i := range ops {
		o := &ops[i]
		if o.Kind != List || !o.OK || !r.keep[i] {
			continue
		}
		for s, q := range o.Seen[:len(r.h.Pets)] {
			if w := writes[q]; w != nil && w.Slot == s {
				shown[s] = append(shown[s], shownAt{o.ret, o, w})
			}
		}
	}
	newest := make([][]int, len(r.h.Pets)) // newest[s][j]: the index of the newest write shown up to j
	for s := range shown {
		slices.SortFunc(shown[s], func(a, b shownAt) int { return cmp.Compare(a.ret, b.ret) })
		newest[s] = make([]int, len(shown[s]))
		for j := range shown[s] {
			newest[s][j] = j
			if j > 0 && shown[s][newest[s][j-1]].w.Call > shown[s][j].w.Call {
				newest[s][j] = newest[s][j-1]
			}
		}
	}
	// takenBack returns the list answered before t that showed the newest
	// write of pet s sent after t0, and that write; nil when none did.
	takenBack := func(s int, t0, t int64) (*op, *op) {
		n, _ := slices.BinarySearchFunc(shown[s], t, func(a shownAt, t int64) int { return cmp.Compare(a.ret, t) })
		if n == 0 {
			return nil, nil
		}
		if x := shown[s][newest[s][n-1]]; x.w.Call > t0 {
			return x.list, x.w
		}
		return nil, nil
	}
	// takenBackNeed returns how long after the first list that showed a
	// write of pet s sent after t0 was answered t is (0 when none was).
	takenBackNeed := func(s int, t0, t int64) int64 {
		j, found := slices.BinarySearchFunc(newest[s], t0, func(k int, t0 int64) int {
			if shown[s][k].w.Call > t0 {
				return 1
			}
			return -1
		})
		if found || j == len(newest[s]) || shown[s][j].ret >= t {
			return 0
		}
		return t - shown[s][j].ret
	}
	var (
		other, never, missing, future, stale, mixed, back finding
		staleByBase                                       = make([]int, len(r.h.Bases))
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
			if fa := firstAfter(s, after(w)); fa < o.Call {
				// The list must take effect before fa, when an update
				// it missed had been answered: o.Call-fa after its call.
				ex.need = max(ex.need, o.Call-fa)
			}
			if firstAfter(s, after(w)) < o.Call-d {
				missed := latestBefore(s, after(w), o.Call-d)
				if broken {
					continue // one stale pet names the list
				}
				note(&stale, o, func() string {
					was := "the quantity before the run"
					if w != nil {
						was = "written by " + r.describeOp(w)
					}
					more := ""
					if d > 0 {
						more = fmt.Sprintf(": %s more than the staleness bound of %s", msOf(o.Call-d-missed.ret), msOf(d))
					}
					return fmt.Sprintf("%s showed pet %d at quantity %d (%s) and so missed %s, answered %s before the list was sent%s",
						r.describeOp(o), pet, q, was, r.describeOp(missed), msOf(o.Call-missed.ret), more)
				})
				if !broken {
					staleByBase[o.Base]++ // once per list
				}
				broken = true
				continue
			}
			ex.need = max(ex.need, takenBackNeed(s, after(w), o.Call))
			if l1, w1 := takenBack(s, after(w), o.Call-d); l1 != nil {
				note(&back, o, func() string {
					was := "the quantity before the run"
					if w != nil {
						was = "written by " + r.describeOp(w)
					}
					return fmt.Sprintf("%s showed pet %d at quantity %d (%s), although %s, answered %s before this list was sent, had shown pet %d at %d, written by %s, after that: a write taken back (once a list shows a write, every list sent after it was answered shows that write or a later one)",
						r.describeOp(o), pet, q, was, r.describeOp(l1), msOf(o.Call-l1.ret), pet, w1.Qty, r.describeOp(w1))
				})
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
	for _, a := range []struct {
		f    *finding
		rule string
	}{
		{&mixed, "a list mixed two instants"}, {&future, "a list showed a write sent after it was answered"},
		{&never, "a list showed a write that was never made"}, {&missing, "a list lacked a pet"},
		{&other, "an update's answer carried another write"},
	} {
		if a.f.count > 0 && ex.always == "" {
			ex.always = a.rule
		}
	}
	for _, f := range []*finding{&stale, &back, &mixed, &future, &never, &missing, &other} {
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
		ex.findings = append(ex.findings, *f)
	}
	return ex
}
