package linearize

import (
	"fmt"
	"time"
)

// How the deployment recovered from the schedule's faults. A fault's
// window says how long updates went unanswered; recovery says when the
// deployment was whole again: after the last fault ended, a strict list
// (Op.Strict: Cache-Control: no-cache, answered from the store itself,
// never from a held or stale state) and an update were both answered
// 200. The run sends its barrier lists strict, and after its clients
// stop it keeps sending a strict list and an update, alone, until both
// are answered so or its limit passes (Options.Recovery): those requests
// are part of the history, so a replay measures the same recovery.

// Recovery is how the deployment of a history recovered from its faults.
type Recovery struct {
	// Faulted is set when the history has faults; the rest says
	// nothing without.
	Faulted bool
	// Fault is the fault that ended last (an index in History.Faults),
	// and From when it ended (Fault.EndedNs, or Fault.AppliedNs for a
	// fault that does not last).
	Fault int
	From  int64
	// List and Update are the first strict list and the first update
	// sent at or after From that were answered 200 (indexes in
	// History.Ops, by return), -1 for none.
	List, Update int
	// After is how long after From both had been answered: the later of
	// their returns; meaningful when Recovered.
	After time.Duration
}

// Recovered reports whether a strict list and an update were answered
// 200 after the last fault ended.
func (r Recovery) Recovered() bool { return r.Faulted && r.List >= 0 && r.Update >= 0 }

// Recover finds how the deployment of h recovered from its faults.
func Recover(h *History) Recovery {
	rec := Recovery{Fault: -1, List: -1, Update: -1}
	for i, f := range h.Faults {
		end := f.AppliedNs
		if f.EndedNs != nil {
			end = *f.EndedNs
		}
		if !rec.Faulted || end >= rec.From {
			rec.Faulted, rec.Fault, rec.From = true, i, end
		}
	}
	if !rec.Faulted {
		return rec
	}
	first := func(ok func(Op) bool) int {
		at := -1
		for i, o := range h.Ops {
			if o.Call >= rec.From && ok(o) && (at < 0 || o.Return < h.Ops[at].Return) {
				at = i
			}
		}
		return at
	}
	rec.List = first(func(o Op) bool { return o.Kind == List && o.Strict && o.OK && !o.Stale })
	rec.Update = first(func(o Op) bool { return o.Kind == Update && o.Known })
	if rec.Recovered() {
		rec.After = time.Duration(max(h.Ops[rec.List].Return, h.Ops[rec.Update].Return) - rec.From)
	}
	return rec
}

// notRecovered is the failure of a history whose deployment did not
// recover within opt.Recovery of its last fault's end; none when it did,
// when the history has no fault or when no limit is set.
func (r *judgement) notRecovered() []Failure {
	rec, limit := r.recovery, r.opt.Recovery
	if limit <= 0 || !rec.Faulted || rec.Recovered() && rec.After <= limit {
		return nil
	}
	f := Failure{Kind: NotRecovered, Pet: -1, Count: 1, Base: -1, Bound: r.opt.Staleness, Fault: rec.Fault, Recovery: limit}
	if rec.List >= 0 {
		f.Ops = append(f.Ops, Involved{Index: rec.List, Role: RoleList})
	}
	if rec.Update >= 0 {
		f.Ops = append(f.Ops, Involved{Index: rec.Update, Role: RoleUpdate})
	}
	return []Failure{f}
}

// RecoveryWords says rec in words, for the report: "recovered 2.4 s after
// the last fault ended", or why not; "" for a history without faults.
// limit is the limit it was judged against (Options.Recovery; zero:
// none).
func RecoveryWords(h *History, rec Recovery, limit time.Duration) string {
	if !rec.Faulted {
		return ""
	}
	ended := fmt.Sprintf("the last fault (%q) ended at %s", h.Faults[rec.Fault].Fault, at(rec.From))
	if rec.Recovered() {
		s := fmt.Sprintf("recovered %.1f s after the last fault ended: %s; a strict list answered 200 at %s, an update at %s",
			rec.After.Seconds(), ended, at(h.Ops[rec.List].Return), at(h.Ops[rec.Update].Return))
		if limit > 0 && rec.After > limit {
			s += fmt.Sprintf(", beyond the limit of %v (-consistency-recovery)", limit)
		}
		return s
	}
	var missing string
	switch {
	case rec.List < 0 && rec.Update < 0:
		missing = "neither a strict list nor an update"
	case rec.List < 0:
		missing = "no strict list (Cache-Control: no-cache)"
	default:
		missing = "no update"
	}
	within := ""
	if limit > 0 {
		within = fmt.Sprintf(" within %v (-consistency-recovery)", limit)
	}
	return fmt.Sprintf("not recovered: %s, and %s sent since was answered 200%s", ended, missing, within)
}

// notRecoveredWords are the words of a NotRecovered failure.
func (w words) notRecovered() (problem, expected string) {
	rec := Recover(w.h)
	problem = "the deployment did not recover from the faults of the schedule: " + RecoveryWords(w.h, rec, w.f.Recovery)
	expected = fmt.Sprintf("a strict list and an update answered 200 again within %v of the last fault's end (-consistency-recovery), "+
		"so that the deployment is shown whole again after the faults; give a longer limit if recovering takes longer by design", w.f.Recovery)
	return problem, expected
}
