package suite

import (
	"context"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// Run runs the selected checks, one after the other, and returns their
// report (see conformancetest.RunChecks): an error only when nothing is
// selected (ErrNoChecks), the target cannot be reached at all
// (ErrUnreachable) or the harness broke (StopRun).
func (rn *Runner) Run(ctx context.Context) (*report.Report, error) {
	checks, err := rn.Selected()
	if err != nil {
		return nil, err
	}
	rep := &report.Report{BaseURL: rn.cfg.BaseURL, Replicas: rn.cfg.Replicas, Level: rn.cfg.Level, ReadOnly: rn.cfg.ReadOnly, Started: time.Now()}
	note, err := rn.Probe(ctx)
	if err == nil {
		err = rn.Prepare(ctx, checks)
	}
	if err != nil {
		rn.cfg.HTTPClient.CloseIdleConnections()
		return nil, err
	}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	for _, ch := range checks {
		var res report.Result
		if ctx.Err() != nil {
			rep.Interrupted = true
			res = report.Result{Name: ch.Name, Source: ch.Source, Rule: ch.Rule, Outcome: report.Skip, Reason: "the run was interrupted before this check"}
		} else {
			res = rn.RunCheck(ctx, ch)
		}
		if err := rn.HarnessError(); err != nil {
			// A broken harness: nothing after it is judged.
			rn.cfg.HTTPClient.CloseIdleConnections()
			return nil, err
		}
		rep.Results = append(rep.Results, res)
		if rn.cfg.Progress != nil {
			rn.cfg.Progress(res)
		}
	}
	if ctx.Err() != nil {
		rep.Interrupted = true
	}
	rep.Duration = time.Since(rep.Started)
	rep.Headlines = rn.Headlines(rep)
	if note != "" {
		// A wrong base URL explains every failure after it: say it first.
		rep.Headlines = append([]string{note + " The failures below may all follow from it."}, rep.Headlines...)
	}
	// Leave no idle connection to the target behind: a server that shuts
	// down gracefully would wait for them (fasthttp waits for every open
	// connection, including ones dialled but never used).
	rn.cfg.HTTPClient.CloseIdleConnections()
	return rep, nil
}
