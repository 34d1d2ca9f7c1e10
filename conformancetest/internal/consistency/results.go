package consistency

import (
	"fmt"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// What the report says of a judged history, for a run and for a replay
// alike: the failures with their kinds and requests, the fault each
// followed, and what each fault of the schedule cost.

// consistencyResult turns the judgement v of h with opt into the check's
// failures, the reason of a skip (a history not judged) and what the
// report shows of it, and draws the picture of a failed history to
// picture when it is not "" (returning where it was written, "" when it
// was not): the same for a run and for a replay.
func consistencyResult(h *linearize.History, v *linearize.Verdict, opt linearize.Options, picture string) (failures []report.Failure, skip string, info *report.ConsistencyResult, drawn string) {
	for _, f := range v.Failures {
		failures = append(failures, consistencyFailure(h, f))
	}
	if v.NotJudged != "" {
		skip = "not judged: " + v.NotJudged
	}
	if len(v.Failures) > 0 && picture != "" {
		if err := drawPicture(picture, v); err != nil {
			failures = append(failures, report.Failure{Kind: KindPictureNotWritten, Problem: fmt.Sprintf("the picture could not be written to %s: %v", picture, err),
				Expected: "the picture of the history written"})
		} else {
			drawn = picture
		}
	}
	n := v.Counts
	return failures, skip, &report.ConsistencyResult{Staleness: opt.Staleness, ObservedStaleness: v.Observed, Observed: v.ObservedWords,
		Operations: n.Operations, Lists: n.Lists, StaleLists: n.StaleLists, FailedLists: n.FailedLists,
		Updates: n.Updates, UpdatesOK: n.UpdatesOK, OverlappedUpdates: n.Overlapped, UnknownUpdates: n.Unknown, RefusedUpdates: n.Refused, LeftOut: n.LeftOut,
		MinUpdates: opt.MinUpdates, StaleIfError: opt.StaleIfError, RecoveryLimit: opt.Recovery,
		RecoveredAfter: recoveredAfter(v.Recovery), Recovered: v.RecoveryWords,
		Faults: linearize.FaultResults(h)}, drawn
}

// recoveredAfter is how long after the last fault ended the deployment
// recovered, nil when it did not (or had no fault).
func recoveredAfter(rec linearize.Recovery) *time.Duration {
	if !rec.Recovered() {
		return nil
	}
	return &rec.After
}

// consistencyFailure is a failure of the judgement of h as the report
// gives it: its words, its kind, the requests involved and the fault it
// followed.
func consistencyFailure(h *linearize.History, f linearize.Failure) report.Failure {
	out := report.Failure{Problem: f.Problem, Expected: f.Expected, Kind: string(f.Kind), Count: f.Count}
	if f.ByBase != nil {
		out.ByBaseURL = map[string]int{}
		for b, n := range f.ByBase {
			out.ByBaseURL[h.Bases[b]] += n
		}
	}
	for _, x := range f.Ops {
		o := h.Ops[x.Index]
		op := report.Operation{Index: x.Index, Role: string(x.Role), Kind: "list", Client: o.Client, BaseURL: h.Bases[o.Base], CallNs: o.Call, ReturnNs: o.Return}
		if o.Kind == linearize.Update {
			op.Kind, op.Pet, op.Quantity = "update", h.Pets[o.Slot].ID, o.Qty
		}
		out.Operations = append(out.Operations, op)
	}
	if f.Fault >= 0 && f.Fault < len(h.Faults) {
		out.AfterFault = h.Faults[f.Fault].Fault
	}
	return out
}
