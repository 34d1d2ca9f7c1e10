package conformancetest

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
)

// The consistency check's history can be saved (Config.ConsistencyHistory)
// and judged again later without the deployment (ReplayConsistency): a
// failure seen in CI can be examined again, and a change of the checker
// tried on real histories.

// consistencyResult turns the judgement of a history into the check's
// failures, the reason of a skip (a history not judged) and what the
// report shows of it: the same for a run and for a replay.
func consistencyResult(v linearize.Verdict, staleness time.Duration, h *linearize.History) (failures []Failure, skip string, info *ConsistencyResult) {
	for _, f := range v.Failures {
		failures = append(failures, Failure{Problem: f.Problem + afterFault(f.Problem, h.Faults), Expected: f.Expected})
	}
	if v.NotJudged != "" {
		skip = "not judged: " + v.NotJudged
	}
	return failures, skip, &ConsistencyResult{Staleness: staleness, ObservedStaleness: v.Observed, Observed: v.ObservedWords, Faults: faultResults(h)}
}

// saveHistory writes the history h of a run started at started, and its
// verdict, to path.
func saveHistory(path string, h *linearize.History, started time.Time, staleness time.Duration, v *linearize.Verdict) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("the history could not be saved: %v", err)
	}
	if err := linearize.WriteHistory(f, h, started, staleness, v); err != nil {
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
	v := linearize.Judge(h, linearize.Options{Staleness: staleness, Picture: cfg.ConsistencyHTML})
	res := Result{Name: ch.name, Source: ch.source, Rule: ch.rule, Requests: len(h.Ops), Detail: v.Detail, Visualization: v.Picture}
	var skip string
	res.Failures, skip, res.Consistency = consistencyResult(v, staleness, h)
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
	case was.Outcome() == v.Outcome() && slices.Equal(was.Failures, v.Failures):
		return note + "; that run concluded the same: " + was.Outcome()
	}
	return note + fmt.Sprintf("; that run concluded otherwise: %s, with %d failures (the checker changed since)", was.Outcome(), len(was.Failures))
}
