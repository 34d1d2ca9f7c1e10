package conformancetest

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// The consistency check's history can be saved (Config.ConsistencyHistory)
// and judged again later without the deployment (ReplayConsistency): a
// failure seen in CI can be examined again, and a change of the checker
// tried on real histories.

// consistencyResult turns the judgement v of h into the check's failures,
// the reason of a skip (a history not judged) and what the report shows
// of it, and draws the picture of a failed history to picture when it is
// not "" (returning where it was written, "" when it was not): the same
// for a run and for a replay.
func consistencyResult(h *linearize.History, v *linearize.Verdict, staleness time.Duration, picture string) (failures []Failure, skip string, info *ConsistencyResult, drawn string) {
	for _, f := range v.Failures {
		failures = append(failures, consistencyFailure(h, f))
	}
	if v.NotJudged != "" {
		skip = "not judged: " + v.NotJudged
	}
	if len(v.Failures) > 0 && picture != "" {
		if err := drawPicture(picture, v); err != nil {
			failures = append(failures, Failure{Kind: KindPictureNotWritten, Problem: fmt.Sprintf("the picture could not be written to %s: %v", picture, err),
				Expected: "the picture of the history written"})
		} else {
			drawn = picture
		}
	}
	n := v.Counts
	return failures, skip, &ConsistencyResult{Staleness: staleness, ObservedStaleness: v.Observed, Observed: v.ObservedWords,
		Lists: n.Lists, FailedLists: n.FailedLists, Updates: n.Updates, UnknownUpdates: n.Unknown, LeftOut: n.LeftOut,
		Faults: faultResults(h)}, drawn
}

// consistencyFailure is a failure of the judgement of h as the report
// gives it: its words, its kind, and the requests involved.
func consistencyFailure(h *linearize.History, f linearize.Failure) Failure {
	out := Failure{Problem: f.Problem, Expected: f.Expected, Kind: string(f.Kind), Count: f.Count}
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

// drawPicture writes the picture of the failed verdict v to path.
func drawPicture(path string, v *linearize.Verdict) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := v.Draw(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// saveHistory writes the history h of a run started at started, and its
// verdict, to path.
func saveHistory(path string, h *linearize.History, started time.Time, staleness time.Duration, v *linearize.Verdict) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("the history could not be saved: %v", err)
	}
	if err := linearize.WriteHistory(f, h, started, linearize.Options{Staleness: staleness}, v); err != nil {
		f.Close()
		return fmt.Errorf("the history could not be saved to %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("the history could not be saved to %s: %v", path, err)
	}
	return nil
}

// ReplayConfig says which saved history ReplayConsistency judges, and how.
type ReplayConfig struct {
	// History is the file a consistency run saved its history to
	// (Config.ConsistencyHistory, -consistency-history).
	History string
	// ConsistencyHTML, when not empty, receives the picture of the
	// history when it fails, as Config.ConsistencyHTML does.
	ConsistencyHTML string
	// ConsistencyStaleness, when JudgeStaleness is set, is the staleness
	// bound to judge against (zero: strict); otherwise the history is
	// judged against the bound its run was judged against.
	ConsistencyStaleness time.Duration
	JudgeStaleness       bool
}

// ErrNotAHistory is returned (wrapped, with the cause) by
// ReplayConsistency when the file is not a history the consistency check
// saved. Compare with errors.Is.
var ErrNotAHistory = errors.New("not a consistency history")

// ReplayConsistency judges a saved consistency history again, without the
// deployment: it sends nothing. The Report holds one result,
// consistency/linearizable, with the verdict and the words the run that
// saved the history would give with this version of the suite; a note
// says whether that run concluded the same.
func ReplayConsistency(cfg ReplayConfig) (*Report, error) {
	in, err := os.Open(cfg.History)
	if err != nil {
		return nil, fmt.Errorf("conformancetest: %w", err)
	}
	defer in.Close()
	saved, err := linearize.ReadHistory(in)
	if err != nil {
		return nil, fmt.Errorf("conformancetest: %s: %w: %v", cfg.History, ErrNotAHistory, err)
	}
	h := saved.History
	ch := consistencyChecks()[0]
	started := time.Now()
	staleness := saved.Staleness
	if cfg.JudgeStaleness {
		if cfg.ConsistencyStaleness < 0 {
			return nil, fmt.Errorf("conformancetest: ReplayConfig.ConsistencyStaleness %v is negative", cfg.ConsistencyStaleness)
		}
		staleness = cfg.ConsistencyStaleness
	}
	v := linearize.Judge(h, linearize.Options{Staleness: staleness})
	res := Result{Name: ch.name, Source: ch.source, Rule: ch.rule, Requests: len(h.Ops), Detail: v.Detail}
	var skip string
	res.Failures, skip, res.Consistency, res.Visualization = consistencyResult(h, &v, staleness, cfg.ConsistencyHTML)
	res.Consistency.History, res.Consistency.Replayed = cfg.History, true
	switch {
	case len(res.Failures) > 0:
		res.Outcome = Fail
	case skip != "":
		res.Outcome, res.Reason = Skip, skip
	default:
		res.Outcome = Pass
	}
	res.Duration = time.Since(started)
	rep := &Report{BaseURL: h.Bases[0], Replicas: h.Bases[1:], Level: LevelContract, Started: started, Results: []Result{res}}
	rep.Duration = res.Duration
	rep.Notes = append(rep.Notes, replayNote(cfg.History, saved, staleness, v))
	return rep, nil
}

// replayNote says where a replayed history came from and whether the run
// that saved it concluded the same.
func replayNote(path string, saved *linearize.Saved, staleness time.Duration, v linearize.Verdict) string {
	note := fmt.Sprintf("judged again from the history saved in %s by the run started %s; nothing was sent", path, saved.Started.UTC().Format(time.RFC3339))
	was := saved.Verdict
	switch {
	case staleness != saved.Staleness:
		return note + fmt.Sprintf("; judged against a staleness bound of %v, that run against %v", staleness, saved.Staleness)
	case was == nil:
		return note + " (the file holds no verdict of its own)"
	case was.Outcome() == v.Outcome() && slices.EqualFunc(was.Failures, v.Failures, sameFailure):
		return note + "; that run concluded the same: " + was.Outcome()
	}
	return note + fmt.Sprintf("; that run concluded otherwise: %s, with %d failures (the checker changed since)", was.Outcome(), len(was.Failures))
}

// sameFailure reports whether a failure read back from a history file is
// the one judged again: the same words, and the same kind when the file
// has one (files of earlier versions do not).
func sameFailure(was, now linearize.Failure) bool {
	return was.Problem == now.Problem && was.Expected == now.Expected && (was.Kind == "" || was.Kind == now.Kind)
}
