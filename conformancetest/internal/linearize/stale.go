package linearize

import (
	"math"
	"time"
)

// Lists marked stale. A deployment may opt in to answer lists during a
// store outage from the last state its store confirmed, up to a bound D
// (its stale-if-error), marking such a list and giving its Age: the whole
// seconds since that state was confirmed (RFC 9111). Such a list (Op.Stale)
// promises less than the others: that it shows the state the inventory
// held at one instant no more than its bound before it was sent, where
// its bound is the lesser of D (Options.StaleIfError) and its Age plus
// one second (Age is rounded down, and the server counts it from that
// instant to its answer, which comes after the call). Never a state that
// never existed: every pet at one instant, each value written by a write
// sent before the list returned and not yet replaced at that instant.
//
// Such a list can be seconds old, far beyond a round, so it does not go
// through the linearizability check (whose pieces the barrier lists cut
// at each round): it is left out of it (prepare, pieces), and judged by
// direct rules over the history the check holds. For each pet, the value
// shown can have been the current one only in an interval:
//
//   - from the call of the write that made it (never before: a write
//     takes effect after it is sent), or from the start of the run for
//     the quantity before it;
//   - to the earliest instant at which it had surely been replaced: the
//     return of an update of that pet answered 200 that was sent after
//     the write that made it had taken effect (returned, or, of unknown
//     outcome, been shown by a list the check holds), or the return of
//     a list (marked stale or not) that showed such a later write: a
//     list shows a state that existed before it returned. Values are
//     never written twice, so a value replaced never comes back.
//
// A list marked stale is a witness for the others too: a list sent after
// it returned that shows a value older than a write it showed fails with
// WriteTakenBack (checkPet), as it would after any list.
//
// The list passes when these intervals and [call - bound, return] have an
// instant in common. Both ends are ones the linearizability check of the
// other requests also rests on, so a failure here is a contradiction in
// the history whatever order the check chose: the rules are sound (a
// deployment that keeps the promise never fails them). They are not
// complete: they name no failure that would need the order of writes in
// flight at once; a list that has nothing in common with the intervals
// fails with MixedInstants (two pets of two instants), and one whose only
// common instants are older than its bound with StaleBeyondBound (this
// covers a state older than D and one older than its Age says). A value
// never written, a write sent after the list returned and a pet missing
// fail as they do for any list.
//
// Without Options.StaleIfError, a list marked stale fails with
// UnexpectedStale: the run was not told the deployment may serve one.

// staleBound is the bound of list o, marked stale, with a stale-if-error
// bound d: the lesser of d and its Age plus one second (d when it gave
// no Age).
func staleBound(o Op, d time.Duration) time.Duration {
	if o.Age < 0 || d == 0 {
		return d
	}
	return min(d, time.Duration(o.Age+1)*time.Second)
}

// replacement is the evidence that a value had been replaced by an
// instant: an update answered 200 (list nil), or a list that showed the
// later write w.
type replacement struct {
	at   int64
	w    *op
	list *op
}

// replaced returns when the value of pet s written by w (nil: the
// quantity before the run) had surely been replaced, and the evidence;
// at is math.MaxInt64 when nothing in the history shows it was.
func (x *rules) replaced(s int, w *op) replacement {
	t0 := after(w)
	none := replacement{at: math.MaxInt64}
	if t0 == unknownReturn {
		return none // of unknown outcome and shown by no list the check holds: it may have taken effect at any time
	}
	out := none
	if fa := x.firstAfter(s, t0); fa < out.at {
		out = replacement{at: fa, w: x.latestBefore(s, t0, fa+1)}
	}
	for _, ws := range []*witnesses{&x.shown, &x.staleShown} {
		if sh := ws.firstShownAfter(s, t0); sh != nil && sh.ret < out.at {
			out = replacement{at: sh.ret, w: sh.w, list: sh.list}
		}
	}
	return out
}

// checkStale applies the rules to list o, marked stale.
func (x *rules) checkStale(o *op) {
	x.onStale = true
	defer func() { x.onStale = false }()
	if x.r.opt.StaleIfError == 0 {
		x.note(UnexpectedStale, -1, as{RoleList, o})
		return
	}
	// from: the latest instant a value shown was written from (the
	// call of its write), of pet newest; until: the earliest instant a
	// value shown had been replaced by, of pet oldest.
	from, newest := int64(math.MinInt64), -1
	until, oldest := replacement{at: math.MaxInt64}, -1
	for s, q := range o.Seen[:len(x.r.h.Pets)] {
		w, ok := x.shownValue(o, s, q)
		if !ok {
			return
		}
		if w != nil && w.Call > from {
			from, newest = w.Call, s
		}
		if rep := x.replaced(s, w); rep.at < until.at {
			until, oldest = rep, s
		}
	}
	if until.at == math.MaxInt64 {
		return
	}
	shown, _ := x.writtenBy(oldest, o.Seen[oldest])
	switch bound := int64(staleBound(o.Op, x.r.opt.StaleIfError)); {
	case from > until.at && newest != oldest:
		x.note(MixedInstants, oldest, as{RoleList, o}, as{RoleNewest, x.r.writes[o.Seen[newest]]}, as{RoleMissed, until.w}, as{RoleShownBy, until.list})
	case until.at < o.Call-bound:
		x.note(StaleBeyondBound, oldest, as{RoleList, o}, as{RoleWrittenBy, shown}, as{RoleMissed, until.w}, as{RoleShownBy, until.list})
	}
}

// shownValue applies to the value q that list o showed of pet s the
// rules of every list: the pet present, the value written by the run (or
// the quantity before it), by a write sent before the list returned. It
// returns the write that made q, and whether q passed.
func (x *rules) shownValue(o *op, s int, q int64) (*op, bool) {
	if q == -1 {
		x.note(MissingPet, s, as{RoleList, o})
		return nil, false
	}
	w, ok := x.writtenBy(s, q)
	switch {
	case !ok:
		x.note(NeverWritten, s, as{RoleList, o})
		return nil, false
	case w != nil && w.Call > o.ret:
		x.note(FutureWrite, s, as{RoleList, o}, as{RoleWrittenBy, w})
		return nil, false
	}
	return w, true
}
