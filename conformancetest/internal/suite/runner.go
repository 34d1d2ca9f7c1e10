package suite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// ErrUnreachable is conformancetest.ErrUnreachable: no answer at all
// came from the target.
var ErrUnreachable = errors.New("the target cannot be reached")

// ErrNoChecks is conformancetest.ErrNoChecks: the run's selection
// matches no check.
var ErrNoChecks = errors.New("no check matches")

// Runner holds a validated configuration, the checks it may run, and
// what the run learnt about the target as a whole.
type Runner struct {
	cfg      Settings
	client   *wire.Client
	registry []*Check
	filter   *regexp.Regexp // Settings.Run, nil when empty
	skip     *regexp.Regexp // Settings.Skip, nil when empty

	mu sync.Mutex
	// refused says how the key was refused by the first request, "" when
	// it was not.
	refused string
	// foreign lists the answers of failures that came from something in
	// front of the API.
	foreign []foreignAnswer
	// harnessErr is set when the harness broke (StopRun): the run stops
	// there.
	harnessErr error
}

// NewRunner returns the runner of a run with the normalized settings cfg
// (Run and Skip compile) over registry, every check in run order.
func NewRunner(cfg Settings, registry []*Check) *Runner {
	rn := &Runner{cfg: cfg, registry: registry,
		client: &wire.Client{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, HTTP: cfg.HTTPClient, Timeout: cfg.RequestTimeout}}
	if cfg.Run != "" {
		rn.filter = regexp.MustCompile(cfg.Run)
	}
	if cfg.Skip != "" {
		rn.skip = regexp.MustCompile(cfg.Skip)
	}
	return rn
}

// Settings is the run's configuration.
func (rn *Runner) Settings() Settings { return rn.cfg }

// Client sends the run's requests.
func (rn *Runner) Client() *wire.Client { return rn.client }

// Selected returns the checks to run, in order.
func (rn *Runner) Selected() ([]*Check, error) {
	var out []*Check
	for _, ch := range rn.registry {
		if rn.cfg.Level == report.LevelSpec && !ch.Spec {
			continue
		}
		if rn.filter != nil && !rn.filter.MatchString(ch.Name) {
			continue
		}
		if rn.skip != nil && rn.skip.MatchString(ch.Name) {
			continue
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		skip := ""
		if rn.skip != nil {
			skip = fmt.Sprintf(" once Skip %q is applied", rn.cfg.Skip)
		}
		return nil, fmt.Errorf("conformancetest: %w %q at level %s%s; list the checks with Checks or -list", ErrNoChecks, rn.cfg.Run, rn.cfg.Level, skip)
	}
	return out, nil
}

// Probe sends one list request and fails with ErrUnreachable when no
// answer comes. An answer, whatever its status, means the target is
// reachable; a note is returned when it looks like the wrong base URL.
func (rn *Runner) Probe(ctx context.Context) (note string, err error) {
	ex := rn.client.Send(ctx, wire.Request{Method: http.MethodGet, Path: "/inventory"})
	if ex.Err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("conformancetest: GET %s/inventory: %w: %s", rn.cfg.BaseURL, ErrUnreachable, rn.client.Scrub(ex.Err.Error()))
	}
	if ex.Resp.Status == http.StatusUnauthorized {
		rn.mu.Lock()
		rn.refused = fmt.Sprintf("GET %s/inventory with it answered %s", rn.cfg.BaseURL, wire.ErrorSummary(ex.Resp))
		if ev := wire.NotFromAPI(ex); ev != "" {
			rn.refused += " (" + ev + ")"
		}
		rn.mu.Unlock()
	}
	if ex.Resp.Status == http.StatusNotFound {
		if _, err := wire.DecodeJSON(ex.Resp.Body); err != nil {
			return fmt.Sprintf("GET %s/inventory answered 404 with a body that is not JSON: is the base URL right, version segment included (e.g. .../v1)?", rn.cfg.BaseURL), nil
		}
	}
	return "", nil
}

// Prepare calls the Prepare of each of checks that has one, in order
// (see Check.Prepare), and returns the first error.
func (rn *Runner) Prepare(ctx context.Context, checks []*Check) error {
	for _, ch := range checks {
		if ch.Prepare == nil {
			continue
		}
		if err := ch.Prepare(ctx, rn.cfg, rn.client.Scrub); err != nil {
			return err
		}
	}
	return nil
}

// HarnessError is the error that stopped the run (see StopRun), nil
// while none did.
func (rn *Runner) HarnessError() error {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.harnessErr
}

// RunCheck runs one check and always restores what it changed.
func (rn *Runner) RunCheck(ctx context.Context, ch *Check) (res report.Result) {
	res = report.Result{Name: ch.Name, Source: ch.Source, Rule: ch.Rule}
	if rn.cfg.ReadOnly && ch.Writes {
		res.Outcome = report.Skip
		res.Reason = "read-only run: this check changes quantities (a PATCH that succeeds)"
		return res
	}
	start := time.Now()
	c := &Checker{rn: rn, ch: ch, ctx: ctx, res: &res, touched: map[int64]bool{}, guarded: map[int64]bool{}, sent: map[int64]bool{}}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(abort); !ok {
					c.AddFailure(report.Failure{Problem: fmt.Sprintf("the check itself panicked (a bug in conformancetest): %v\n%s", v, debug.Stack())})
				}
			}
		}()
		ch.Run(c)
	}()
	c.restore()
	res.Duration = time.Since(start)
	if c.skipped && rn.KeyRefusal() != "" {
		res.Reason = "the API key was refused (see the first lines of the report), so: " + res.Reason
	}
	res.Outcome, res.Reason = c.outcome(ctx, res)
	return res
}

// outcome is the verdict of the check that ended with res.
func (c *Checker) outcome(ctx context.Context, res report.Result) (report.Outcome, string) {
	switch {
	case len(res.Failures) > 0:
		return report.Fail, ""
	case c.skipped:
		return report.Skip, res.Reason
	case len(c.notJudged) > 0 && ctx.Err() == nil:
		return report.Skip, "not judged through the intermediary in front of the API: " + strings.Join(c.notJudged, "; ") +
			"; every other request of the check got the answer the rule requires. Run the suite against the API directly to judge these."
	case ctx.Err() != nil:
		return report.Skip, "the run was interrupted during this check"
	}
	return report.Pass, res.Reason
}
