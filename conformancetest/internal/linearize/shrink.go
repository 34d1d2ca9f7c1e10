package linearize

import (
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// When porcupine finds no order of a piece of the history but no direct
// rule names a cause, the words name the smallest set of its requests
// found that cannot be ordered, and the pet, shrinking the piece greedily
// as etcd's robustness tests and delta debugging do: a change is kept
// while the requests left still cannot be ordered. Each change only
// relaxes: a list left out, an update that no list left shows left out,
// an update shown by one made of unknown outcome (it may then take effect
// at any instant after its call). So the set left is itself a history
// that no copy of the inventory can produce.

// shrinkCheck bounds each check of the shrinking; a check that does not
// finish in time counts as orderable, so the change is not kept.
const shrinkCheck = time.Second

// smallest shrinks the piece ops (its pin first), each list's call moved
// d earlier, until deadline. It returns the requests left (pin first) and
// the pet whose model alone rejects them (-1 when it takes several), or
// nil when porcupine does not find the piece unorderable in time.
func (r *judgement) smallest(ops []porcupine.Operation, deadline time.Time) ([]porcupine.Operation, int) {
	illegal := func(ops []porcupine.Operation, m porcupine.Model) bool {
		left := min(shrinkCheck, time.Until(deadline))
		return left > 0 && porcupine.CheckOperationsTimeout(m, ops, left) == porcupine.Illegal
	}
	if !illegal(ops, r.model) {
		return nil, -1
	}
	cur := slices.Clone(ops)
	// relaxed returns cur with the requests at positions in [from, to)
	// relaxed, and whether any was.
	relaxed := func(cur []porcupine.Operation, from, to int) ([]porcupine.Operation, bool) {
		out := make([]porcupine.Operation, 0, len(cur))
		changed := false
		for i, o := range cur {
			if i < from || i >= to || o.Metadata == -1 {
				out = append(out, o)
				continue
			}
			in, res := o.Input.(cinput), o.Output.(coutput)
			switch {
			case in.list:
				changed = true
				continue
			case !r.shownBy(cur, o):
				changed = true
				continue
			case res.known:
				res.known = false
				o.Output, o.Return = res, unknownReturn
				changed = true
			}
			out = append(out, o)
		}
		return out, changed
	}
	// Halving chunks, then one at a time, until nothing more goes.
	for size := max(len(cur)/2, 1); ; size = max(size/2, 1) {
		for from := 1; from < len(cur); {
			next, changed := relaxed(cur, from, min(from+size, len(cur)))
			if changed && illegal(next, r.model) {
				cur = next
				continue
			}
			from += size
		}
		if size == 1 || time.Now().After(deadline) {
			break
		}
	}
	// A second pass one at a time: what an earlier change made possible.
	for from := 1; from < len(cur) && time.Now().Before(deadline); {
		next, changed := relaxed(cur, from, from+1)
		if changed && illegal(next, r.model) {
			cur = next
			continue
		}
		from++
	}
	for s := range r.h.Pets {
		if illegal(cur, r.modelOf(s)) {
			return cur, s
		}
	}
	return cur, -1
}

// shownBy reports whether a list of ops showed the value update o wrote.
func (r *judgement) shownBy(ops []porcupine.Operation, o porcupine.Operation) bool {
	in := o.Input.(cinput)
	for _, x := range ops {
		if xi := x.Input.(cinput); xi.list && x.Output.(coutput).seen[in.slot] == in.qty {
			return true
		}
	}
	return false
}
