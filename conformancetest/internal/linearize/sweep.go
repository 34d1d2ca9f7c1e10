package linearize

import (
	"cmp"
	"math/bits"
	"slices"
	"time"
)

// sweep decides whether the history, each list's call moved d earlier, is
// linearizable, in one pass over time. porcupine searches orders of all
// the requests, lists included; moved lists overlap many updates each, and
// its search grows too fast with that overlap. But a list changes nothing:
// once the updates have their instants, each list only needs one instant
// in its interval at which the state is the one it showed. So the sweep
// keeps, at each instant, the configurations the updates can have reached:
// the state, which updates in flight have taken effect, and which open
// lists have not yet seen their state. A configuration that an update's
// return or a list's end finds short (the update not applied, the list
// never matched) ends; the history is linearizable when one configuration
// reaches the end. Of two configurations with the same state and the same
// updates applied, the one that owes a subset of the other's lists is kept.
//
// It returns whether the history is linearizable, whether that is known
// (false when deadline passed, or more than 64 updates were in flight at
// once), and for a history that is not, the request (an index in r.ops)
// whose end no configuration survived.
func (r *judgement) sweep(d int64, deadline time.Time) (ok, known bool, stuck int) {
	w := &sweeper{r: r, configs: map[key][]owedSet{{st: r.initial}: {nil}}, slotOf: map[int]int{}, free: ^uint64(0),
		listSlot: map[int]int32{}, openBy: map[cstate][]int32{}}
	for n, e := range r.events(d) {
		if n%1024 == 0 && time.Now().After(deadline) {
			return false, false, -1
		}
		o := &r.ops[e.i]
		switch e.kind {
		case writeCall:
			if w.free == 0 {
				return false, false, -1
			}
			w.writeCall(e.i)
		case listOpen:
			w.listOpen(e.i, o)
		case listClose:
			if !w.listClose(e.i, o) {
				return false, true, e.i
			}
		case writeReturn:
			if !w.writeReturn(e.i) {
				return false, true, e.i
			}
		}
	}
	return true, true, -1
}

// The events of the sweep, in this order at one instant.
const (
	writeCall = iota
	listOpen
	listClose
	writeReturn
)

type event struct {
	t    int64
	kind int
	i    int
}

// events are the calls and returns of the requests kept, each list's
// call moved d earlier, in order: calls and opens before returns and ends
// at the same instant, as the intervals are closed.
func (r *judgement) events(d int64) []event {
	var events []event
	for i := range r.ops {
		if !r.keep[i] {
			continue
		}
		o := &r.ops[i]
		if o.Kind == List {
			events = append(events, event{o.Call - d, listOpen, i}, event{o.ret, listClose, i})
		} else {
			events = append(events, event{o.Call, writeCall, i}, event{o.ret, writeReturn, i})
		}
	}
	slices.SortFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})
	return events
}

// key is a configuration's state and the updates in flight that took
// effect (bits of their slots).
type key struct {
	st      cstate
	applied uint64
}

// sweeper is one sweep's configurations and the requests open.
type sweeper struct {
	r *judgement
	// configs maps each state and set of applied updates to the sets of
	// lists still owed (an antichain: none a subset of another), each a
	// set of the open lists' slots.
	configs map[key][]owedSet
	slotOf  map[int]int // update → its slot while in flight
	inSlot  [64]int     // slot → update
	free    uint64      // slots not in use
	pending uint64      // slots in use
	// The open lists have slots of their own, reused once closed.
	listSlot  map[int]int32
	freeLists []int32
	nextList  int32
	openBy    map[cstate][]int32 // the slots of the open lists that showed each state
	// stale are the configurations that expand has yet to expand.
	stale []key
}

// add inserts the configuration (k, owed) in m unless one as good is
// there.
func add(m map[key][]owedSet, k key, owed owedSet) bool {
	sets := m[k]
	for _, s := range sets {
		if subset(s, owed) {
			return false
		}
	}
	kept := sets[:0]
	for _, s := range sets {
		if !subset(owed, s) {
			kept = append(kept, s)
		}
	}
	m[k] = append(kept, owed)
	return true
}

// seeState removes from owed the open lists that showed st.
func (w *sweeper) seeState(owed owedSet, st cstate) owedSet {
	lists := w.openBy[st]
	if len(lists) == 0 || owed.empty() {
		return owed
	}
	out := owed.clone()
	for _, l := range lists {
		out.clear(l)
	}
	return out
}

// expand adds every configuration reachable by letting updates in flight
// take effect now, one after another, from the configurations in stale:
// the set is kept closed so. A list's end and an update's return keep it
// closed (a configuration dropped owes what the ones it was reached from
// owe, or lacks an update they lack). An update's call opens new ways
// from every configuration, and a list's opening from those already in
// its state (what they reach has seen it).
func (w *sweeper) expand() {
	work := w.stale
	w.stale = nil
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		for _, owed := range slices.Clone(w.configs[k]) {
			for b := w.pending &^ k.applied; b != 0; b &= b - 1 {
				slot := bits.TrailingZeros64(b)
				u := &w.r.ops[w.inSlot[slot]]
				if u.Known && u.Got != u.Qty {
					continue // its answer carried another write: it cannot take effect as answered
				}
				nk := key{st: k.st, applied: k.applied | 1<<slot}
				nk.st[u.Slot] = u.Qty
				if add(w.configs, nk, w.seeState(owed, nk.st)) {
					work = append(work, nk)
				}
			}
		}
	}
}

// writeCall puts update i in flight, in a free slot.
func (w *sweeper) writeCall(i int) {
	slot := bits.TrailingZeros64(w.free)
	w.free &^= 1 << slot
	w.pending |= 1 << slot
	w.slotOf[i], w.inSlot[slot] = slot, i
	w.stale = w.stale[:0]
	for k := range w.configs {
		w.stale = append(w.stale, k)
	}
}

// listOpen opens list i (o): every configuration not in its state owes
// it.
func (w *sweeper) listOpen(i int, o *op) {
	id := w.nextList
	if n := len(w.freeLists); n > 0 {
		id, w.freeLists = w.freeLists[n-1], w.freeLists[:n-1]
	} else {
		w.nextList++
	}
	w.listSlot[i] = id
	w.openBy[o.Seen] = append(w.openBy[o.Seen], id)
	for k, sets := range w.configs {
		if k.st == o.Seen {
			w.stale = append(w.stale, k)
			continue // it sees its state at once
		}
		for j, owed := range sets {
			owed = owed.clone()
			owed.set(id)
			w.configs[k][j] = owed
		}
	}
}

// listClose ends list i (o): the configurations that still owe it end.
// It returns whether any configuration is left.
func (w *sweeper) listClose(i int, o *op) bool {
	w.expand()
	id := w.listSlot[i]
	delete(w.listSlot, i)
	next := make(map[key][]owedSet, len(w.configs))
	for k, sets := range w.configs {
		for _, owed := range sets {
			if !owed.has(id) {
				add(next, k, owed)
			}
		}
	}
	w.openBy[o.Seen] = slices.DeleteFunc(w.openBy[o.Seen], func(l int32) bool { return l == id })
	if len(w.openBy[o.Seen]) == 0 {
		delete(w.openBy, o.Seen)
	}
	w.freeLists = append(w.freeLists, id)
	w.configs = next
	return len(next) > 0
}

// writeReturn ends update i: the configurations it did not take effect in
// end. It returns whether any configuration is left.
func (w *sweeper) writeReturn(i int) bool {
	w.expand()
	slot := w.slotOf[i]
	delete(w.slotOf, i)
	bit := uint64(1) << slot
	next := make(map[key][]owedSet, len(w.configs))
	for k, sets := range w.configs {
		if k.applied&bit == 0 {
			continue // it must have taken effect by its return
		}
		nk := key{st: k.st, applied: k.applied &^ bit}
		for _, owed := range sets {
			add(next, nk, owed)
		}
	}
	w.free |= bit
	w.pending &^= bit
	w.configs = next
	return len(next) > 0
}

// owedSet is a set of the slots of open lists, as bits.
type owedSet []uint64

func (s owedSet) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

func (s owedSet) clone() owedSet { return slices.Clone(s) }

func (s owedSet) has(i int32) bool {
	return int(i/64) < len(s) && s[i/64]&(1<<(i%64)) != 0
}

func (s *owedSet) set(i int32) {
	for int(i/64) >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[i/64] |= 1 << (i % 64)
}

func (s owedSet) clear(i int32) {
	if int(i/64) < len(s) {
		s[i/64] &^= 1 << (i % 64)
	}
}

// subset reports whether a is a subset of b.
func subset(a, b owedSet) bool {
	for i, w := range a {
		var v uint64
		if i < len(b) {
			v = b[i]
		}
		if w&^v != 0 {
			return false
		}
	}
	return true
}
