package linearize

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// explanation is what the direct rules found.
type explanation struct {
	// failures are the rules broken with the staleness bound judged
	// against, one each: the first case, and how many there were (per
	// base URL for stale lists).
	failures []Failure
	// need is the smallest staleness bound that no list breaks a rule
	// against: below it the history cannot pass.
	need int64
	// always is a rule broken whatever the bound ("" when none): no
	// staleness makes the history pass.
	always FailureKind
	// strict says whether a request that the linearizability check
	// holds broke a rule (not only lists marked stale, which it leaves
	// out): porcupine must then find no order.
	strict bool
}

// rules applies the direct rules, each sufficient for a violation, with
// each list's call moved d earlier (the staleness bound).
type rules struct {
	r *judgement
	d int64
	// per holds, per pet, the updates answered 200 with their own
	// quantity, by call, with the earliest return of those from each
	// index on.
	per []known
	// shown holds the writes the lists the linearizability check holds
	// showed; staleShown those lists marked stale showed (see
	// witnesses).
	shown, staleShown witnesses
	// found holds the first case of each rule broken, and how many;
	// byStrict the kinds broken by a request that the linearizability
	// check holds. onStale is set while a list marked stale is judged.
	found       map[FailureKind]*Failure
	byStrict    map[FailureKind]bool
	onStale     bool
	staleByBase []int
	need        int64
}

type known struct {
	calls, rets, sufMin []int64
	ops                 []*op
}

// witnesses holds, per pet, the writes lists showed, by the return of
// the list that showed them; newest[s][j] is the index of the newest
// write (by call) shown up to j: a list sent after a list that showed a
// write was answered must show it, or a later one.
type witnesses struct {
	shown  [][]shownAt
	newest [][]int
}

type shownAt struct {
	ret  int64 // when the list that showed it was answered
	list *op
	w    *op
}

// explain applies the direct rules with each list's call moved d earlier.
func (r *judgement) explain(d int64) explanation {
	x := &rules{r: r, d: d, found: map[FailureKind]*Failure{}, byStrict: map[FailureKind]bool{}, staleByBase: make([]int, len(r.h.Bases))}
	x.indexKnown()
	x.indexShown()
	for i := range r.ops {
		o := &r.ops[i]
		switch {
		case o.Kind == Update:
			x.checkUpdate(o)
		case o.OK && o.Stale:
			x.checkStale(o)
		case o.OK:
			x.checkList(o)
		}
	}
	ex := explanation{need: x.need, strict: len(x.byStrict) > 0}
	// The observed staleness is the strict lists': a list marked stale
	// is judged against its own bound.
	for _, k := range []FailureKind{MixedInstants, FutureWrite, NeverWritten, MissingPet, AnotherWrite} {
		if x.byStrict[k] && ex.always == "" {
			ex.always = k
		}
	}
	for _, k := range []FailureKind{MissedUpdate, OlderThanBound, StaleBeyondBound, UnexpectedStale, WriteTakenBack, MixedInstants, FutureWrite, NeverWritten, MissingPet, AnotherWrite} {
		if f := x.found[k]; f != nil {
			if k == MissedUpdate || k == OlderThanBound {
				f.ByBase = x.staleByBase
			}
			ex.failures = append(ex.failures, *f)
		}
	}
	return ex
}

func (x *rules) indexKnown() {
	x.per = make([]known, len(x.r.h.Pets))
	for i := range x.r.ops {
		o := &x.r.ops[i]
		if o.Kind == Update && o.Known && o.Got == o.Qty {
			k := &x.per[o.Slot]
			k.calls = append(k.calls, o.Call)
			k.rets = append(k.rets, o.ret)
			k.ops = append(k.ops, o)
		}
	}
	for s := range x.per {
		k := &x.per[s]
		k.sufMin = make([]int64, len(k.rets)+1)
		k.sufMin[len(k.rets)] = math.MaxInt64
		for j := len(k.rets) - 1; j >= 0; j-- {
			k.sufMin[j] = min(k.rets[j], k.sufMin[j+1])
		}
	}
}

// indexShown indexes the writes lists showed: those the check holds in
// shown, those marked stale in staleShown.
func (x *rules) indexShown() {
	x.shown = x.witnessesOf(func(i int) bool { return x.r.keep[i] })
	x.staleShown = x.witnessesOf(func(i int) bool { return x.r.ops[i].Stale })
}

// witnessesOf indexes the writes shown by the lists answered 200 that
// pick picks.
func (x *rules) witnessesOf(pick func(i int) bool) witnesses {
	pets := len(x.r.h.Pets)
	ws := witnesses{shown: make([][]shownAt, pets), newest: make([][]int, pets)}
	for i := range x.r.ops {
		o := &x.r.ops[i]
		if o.Kind != List || !o.OK || !pick(i) {
			continue
		}
		for s, q := range o.Seen[:pets] {
			if w := x.r.writes[q]; w != nil && w.Slot == s {
				ws.shown[s] = append(ws.shown[s], shownAt{o.ret, o, w})
			}
		}
	}
	for s, sh := range ws.shown {
		slices.SortFunc(sh, func(a, b shownAt) int { return cmp.Compare(a.ret, b.ret) })
		ws.newest[s] = make([]int, len(sh))
		for j := range sh {
			ws.newest[s][j] = j
			if j > 0 && sh[ws.newest[s][j-1]].w.Call > sh[j].w.Call {
				ws.newest[s][j] = ws.newest[s][j-1]
			}
		}
	}
	return ws
}

// firstAfter returns the earliest return of a known update of pet s
// called after t (math.MaxInt64 when none).
func (x *rules) firstAfter(s int, t int64) int64 {
	k := &x.per[s]
	j, _ := slices.BinarySearch(k.calls, t+1)
	return k.sufMin[j]
}

// latestBefore returns the known update of pet s called after t that
// returned last before u: the freshest write a list missed.
func (x *rules) latestBefore(s int, t, u int64) *op {
	var best *op
	k := &x.per[s]
	j, _ := slices.BinarySearch(k.calls, t+1)
	for ; j < len(k.ops); j++ {
		if w := k.ops[j]; w.ret < u && (best == nil || w.ret > best.ret) {
			best = w
		}
	}
	return best
}

// writtenBy returns the write that made q, for pet s, and whether one did
// (or q is the quantity before the run).
func (x *rules) writtenBy(s int, q int64) (*op, bool) {
	if q == x.r.initial[s] {
		return nil, true
	}
	w := x.r.writes[q]
	if w == nil || w.Slot != s {
		return nil, false
	}
	return w, true
}

// after is the instant a value is known to have been written by: the
// write's return (for an unknown outcome, the first list that showed it),
// or before the run.
func after(w *op) int64 {
	if w == nil {
		return math.MinInt64
	}
	return w.ret
}

// takenBack returns the list answered before t that showed the newest
// write of pet s sent after t0, and that write; nil when none did.
func (ws *witnesses) takenBack(s int, t0, t int64) (*op, *op) {
	n, _ := slices.BinarySearchFunc(ws.shown[s], t, func(a shownAt, t int64) int { return cmp.Compare(a.ret, t) })
	if n == 0 {
		return nil, nil
	}
	if sh := ws.shown[s][ws.newest[s][n-1]]; sh.w.Call > t0 {
		return sh.list, sh.w
	}
	return nil, nil
}

// takenBackNeed returns how long after the first list that showed a
// write of pet s sent after t0 was answered t is (0 when none was).
func (ws *witnesses) takenBackNeed(s int, t0, t int64) int64 {
	sh := ws.firstShownAfter(s, t0)
	if sh == nil || sh.ret >= t {
		return 0
	}
	return t - sh.ret
}

// firstShownAfter returns the first list (by return) that showed a
// write of pet s sent after t0, nil when none did.
func (ws *witnesses) firstShownAfter(s int, t0 int64) *shownAt {
	// newest is a running maximum by call, in the order of the lists'
	// returns: the first entry whose newest write was sent after t0 is
	// that write's own list, the first to show a write sent after t0.
	j, _ := slices.BinarySearchFunc(ws.newest[s], t0, func(k int, t0 int64) int {
		if ws.shown[s][k].w.Call > t0 {
			return 1
		}
		return -1
	})
	if j == len(ws.newest[s]) {
		return nil
	}
	return &ws.shown[s][j]
}

// as is a request involved in a case of a rule, in role; o nil when there
// is none (the quantity before the run was written by no request).
type as struct {
	role Role
	o    *op
}

// note counts a case of rule k about pet: the first is kept, with the
// requests involved.
func (x *rules) note(k FailureKind, pet int, ops ...as) {
	if !x.onStale {
		x.byStrict[k] = true
	}
	if f := x.found[k]; f != nil {
		f.Count++
		return
	}
	f := &Failure{Kind: k, Pet: pet, Count: 1, Base: -1, Bound: time.Duration(x.d)}
	if l := ops[0].o; l.Kind == List && l.Stale {
		f.StaleIfError = x.r.opt.StaleIfError
		f.Bound = staleBound(l.Op, x.r.opt.StaleIfError)
	}
	for _, a := range ops {
		if a.o != nil {
			f.Ops = append(f.Ops, Involved{Index: a.o.idx, Role: a.role})
		}
	}
	x.found[k] = f
}

// checkUpdate: an update's answer carries its own write.
func (x *rules) checkUpdate(o *op) {
	if o.Known && o.Got != o.Qty {
		x.note(AnotherWrite, o.Slot, as{RoleUpdate, o}, as{RoleWrittenBy, x.r.writes[o.Got]})
	}
}

// checkList applies the rules to a list: each pet's value, then the one
// instant of all of them.
func (x *rules) checkList(o *op) {
	latestCall, latestSlot := int64(math.MinInt64), -1
	broken := false
	for s, q := range o.Seen[:len(x.r.h.Pets)] {
		bad, w := x.checkPet(o, s, q, broken)
		if bad {
			broken = true
			continue
		}
		if w != nil && w.Call > latestCall {
			latestCall, latestSlot = w.Call, s
		}
	}
	if !broken && latestSlot >= 0 {
		x.checkInstant(o, latestSlot, latestCall)
	}
}

// checkPet applies the rules to the value q list o showed of pet s, after
// an earlier pet broke one when broken (one stale pet names the list). It
// returns whether a rule is broken, and the write that made q.
func (x *rules) checkPet(o *op, s int, q int64, broken bool) (bool, *op) {
	if q == -1 {
		x.note(MissingPet, s, as{RoleList, o})
		return true, nil
	}
	w, ok := x.writtenBy(s, q)
	switch {
	case !ok:
		x.note(NeverWritten, s, as{RoleList, o})
		return true, nil
	case w != nil && w.Call > o.ret:
		x.note(FutureWrite, s, as{RoleList, o}, as{RoleWrittenBy, w})
		return true, nil
	}
	fa := x.firstAfter(s, after(w))
	if fa < o.Call {
		// The list must take effect before fa, when an update it
		// missed had been answered: o.Call-fa after its call.
		x.need = max(x.need, o.Call-fa)
	}
	if fa < o.Call-x.d {
		if !broken {
			kind := MissedUpdate
			if x.d > 0 {
				kind = OlderThanBound
			}
			x.note(kind, s, as{RoleList, o}, as{RoleWrittenBy, w}, as{RoleMissed, x.latestBefore(s, after(w), o.Call-x.d)})
			x.staleByBase[o.Base]++ // once per list
		}
		return true, nil
	}
	x.need = max(x.need, x.shown.takenBackNeed(s, after(w), o.Call))
	if l1, w1 := x.shown.takenBack(s, after(w), o.Call-x.d); l1 != nil {
		x.note(WriteTakenBack, s, as{RoleList, o}, as{RoleWrittenBy, w}, as{RoleShownBy, l1}, as{RoleTakenBack, w1})
		return true, nil
	}
	if l1, w1 := x.staleShown.takenBack(s, after(w), o.Call-x.d); l1 != nil {
		// A list marked stale showed a state that existed before it
		// returned: a later write than this one had taken effect. The
		// linearizability check leaves that list out, so the failure
		// is counted as one of a stale list's.
		x.onStale = true
		x.note(WriteTakenBack, s, as{RoleList, o}, as{RoleWrittenBy, w}, as{RoleShownBy, l1}, as{RoleTakenBack, w1})
		x.onStale = false
		return true, nil
	}
	return false, w
}

// checkInstant: no pet of list o may show a value that an update answered
// before the newest value's write (of pet latest, called at latestCall)
// was even sent had replaced.
func (x *rules) checkInstant(o *op, latest int, latestCall int64) {
	for s, q := range o.Seen[:len(x.r.h.Pets)] {
		if s == latest {
			continue
		}
		w, _ := x.writtenBy(s, q)
		if x.firstAfter(s, after(w)) < latestCall {
			newest := x.r.writes[o.Seen[latest]]
			x.note(MixedInstants, s, as{RoleList, o}, as{RoleNewest, newest}, as{RoleMissed, x.latestBefore(s, after(w), latestCall)})
			return
		}
	}
}
