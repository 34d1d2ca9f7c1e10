package consistency

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
// and judged again later without the deployment (Replay): a failure seen
// in CI can be examined again, and a change of the checker tried on real
// histories.

// The kinds of failure of this package's own, beside the judgement's
// (conformancetest.KindPictureNotWritten, KindHistoryNotSaved).
const (
	// KindPictureNotWritten: the picture of the history
	// (Config.ConsistencyHTML) could not be written.
	KindPictureNotWritten = "picture-not-written"
	// KindHistoryNotSaved: the history (Config.ConsistencyHistory) could
	// not be saved.
	KindHistoryNotSaved = "history-not-saved"
)

// ErrNotAHistory is conformancetest.ErrNotAHistory: the file is not a
// history the consistency check saved.
var ErrNotAHistory = errors.New("not a consistency history")

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
func saveHistory(path string, h *linearize.History, started time.Time, opt linearize.Options, v *linearize.Verdict) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("the history could not be saved: %v", err)
	}
	if err := linearize.WriteHistory(f, h, started, opt, v); err != nil {
		f.Close()
		return fmt.Errorf("the history could not be saved to %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("the history could not be saved to %s: %v", path, err)
	}
	return nil
}

// ReplayConfig is conformancetest.ReplayConfig field for field (the
// fields are documented there), converted with a Go conversion, which
// does not compile once the two differ.
type ReplayConfig struct {
	History              string
	ConsistencyHTML      string
	ConsistencyStaleness time.Duration
	JudgeStaleness       bool
}

// Replay judges a saved consistency history again, without the
// deployment (see conformancetest.ReplayConsistency).
func Replay(cfg ReplayConfig) (*report.Report, error) {
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
	started := time.Now()
	staleness := saved.Staleness
	if cfg.JudgeStaleness {
		if cfg.ConsistencyStaleness < 0 {
			return nil, fmt.Errorf("conformancetest: ReplayConfig.ConsistencyStaleness %v is negative", cfg.ConsistencyStaleness)
		}
		staleness = cfg.ConsistencyStaleness
	}
	opt := linearize.Options{Staleness: staleness, MinUpdates: saved.MinUpdates, StaleIfError: saved.StaleIfError, Recovery: saved.Recovery}
	v := linearize.Judge(h, opt)
	res := report.Result{Name: Check.Name, Source: Check.Source, Rule: Check.Rule, Requests: len(h.Ops), Detail: v.Detail}
	var skip string
	res.Failures, skip, res.Consistency, res.Visualization = consistencyResult(h, &v, opt, cfg.ConsistencyHTML)
	res.Consistency.History, res.Consistency.Replayed = cfg.History, true
	switch {
	case len(res.Failures) > 0:
		res.Outcome = report.Fail
	case skip != "":
		res.Outcome, res.Reason = report.Skip, skip
	default:
		res.Outcome = report.Pass
	}
	res.Duration = time.Since(started)
	rep := &report.Report{BaseURL: h.Bases[0], Replicas: h.Bases[1:], Level: report.LevelContract, Started: started, Results: []report.Result{res}}
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
