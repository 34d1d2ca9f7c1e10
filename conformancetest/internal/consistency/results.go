package consistency

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// What the report says of a judged history, for a run and for a replay
// alike: the failures with their kinds and requests, the fault each
// followed, and what each fault of the schedule cost.

// consistencyResult turns the judgement v of h into the check's failures,
// the reason of a skip (a history not judged) and what the report shows
// of it, and draws the picture of a failed history to picture when it is
// not "" (returning where it was written, "" when it was not): the same
// for a run and for a replay.
func consistencyResult(h *linearize.History, v *linearize.Verdict, staleness time.Duration, picture string) (failures []report.Failure, skip string, info *report.ConsistencyResult, drawn string) {
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
	return failures, skip, &report.ConsistencyResult{Staleness: staleness, ObservedStaleness: v.Observed, Observed: v.ObservedWords,
		Lists: n.Lists, FailedLists: n.FailedLists, Updates: n.Updates, UnknownUpdates: n.Unknown, LeftOut: n.LeftOut,
		Faults: faultResults(h)}, drawn
}

// consistencyFailure is a failure of the judgement of h as the report
// gives it: its words, its kind, and the requests involved.
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
	attributeFault(&out, h.Faults)
	return out
}

// faultResults says what each fault of h cost: the window around it
// with no update answered 200, the answers other than 200 and the
// updates of unknown outcome sent from it to the next fault.
func faultResults(h *linearize.History) []report.FaultResult {
	if len(h.Faults) == 0 {
		return nil
	}
	end := int64(h.Duration)
	var oks []int64
	for _, o := range h.Ops {
		end = max(end, o.Return)
		if o.Kind == linearize.Update && o.Known {
			oks = append(oks, o.Return)
		}
	}
	slices.Sort(oks)
	edges := append(append([]int64{0}, oks...), end)
	out := make([]report.FaultResult, 0, len(h.Faults))
	for i, f := range h.Faults {
		r := report.FaultResult{Fault: f.Fault, Kind: f.Kind, Offset: time.Duration(f.OffsetNs), AppliedAt: time.Duration(f.AppliedNs),
			Note: f.Note, Closed: f.Closed, ExitStatus: f.ExitStatus, Output: f.Output, Answers: map[string]int{}}
		last := f.AppliedNs
		if f.EndedNs != nil {
			e := time.Duration(*f.EndedNs)
			r.EndedAt, last = &e, *f.EndedNs
		}
		for k := 1; k < len(edges); k++ {
			from, to := edges[k-1], edges[k]
			if from <= last && to >= f.AppliedNs && time.Duration(to-from) > r.Window {
				r.Window, r.WindowFrom, r.WindowTo = time.Duration(to-from), time.Duration(from), time.Duration(to)
			}
		}
		until := int64(1<<63 - 1)
		if i+1 < len(h.Faults) {
			until = h.Faults[i+1].AppliedNs
		}
		for _, o := range h.Ops {
			if o.Call < f.AppliedNs || o.Call >= until {
				continue
			}
			if st := answerStatus(o); st != "200" {
				r.Answers[st]++
			}
			if o.Kind == linearize.Update && !o.Known && !strings.HasSuffix(o.Answer, "(a refusal)") {
				r.Unknown++
			}
		}
		out = append(out, r)
	}
	return out
}

var listStatus = regexp.MustCompile(`answered (\d{3}),`)

// answerStatus is the status of a request's answer as the history holds
// it: "200", "503", …, or "no answer".
func answerStatus(o linearize.Op) string {
	if o.Kind == linearize.List {
		if o.OK {
			return "200"
		}
		if m := listStatus.FindStringSubmatch(o.Answer); m != nil {
			return m[1]
		}
		if strings.HasPrefix(o.Answer, "GET /inventory") {
			return "200" // answered 200 with something that is not a list
		}
		return "no answer"
	}
	if o.Known {
		return "200"
	}
	if len(o.Answer) >= 3 {
		if _, err := strconv.Atoi(o.Answer[:3]); err == nil {
			return o.Answer[:3]
		}
	}
	return "no answer"
}

// attributeFault says which fault of the schedule a failure followed:
// the last applied before the latest of its requests was sent (the one
// that saw the harm, a list after a failover), in its words and in
// AfterFault.
func attributeFault(f *report.Failure, faults []linearize.Fault) {
	if len(faults) == 0 || len(f.Operations) == 0 {
		return
	}
	var latest int64
	for _, o := range f.Operations {
		latest = max(latest, o.CallNs)
	}
	var last *linearize.Fault
	for i := range faults {
		if faults[i].AppliedNs <= latest {
			last = &faults[i]
		}
	}
	if last == nil {
		f.Problem += " (before any fault of the schedule)"
		return
	}
	f.AfterFault = last.Fault
	f.Problem += fmt.Sprintf(" (after the fault %q, applied at %.3fs)", last.Fault, time.Duration(last.AppliedNs).Seconds())
}
