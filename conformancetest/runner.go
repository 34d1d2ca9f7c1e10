package conformancetest

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
)

// ErrUnreachable is returned (wrapped, with the cause) by RunChecks when
// no answer at all came from the target: refused connection, unknown
// host, TLS failure, time-out. Compare with errors.Is.
var ErrUnreachable = errors.New("the target cannot be reached")

// ErrNoChecks is returned by RunChecks when Config.Run matches no check
// at the configured level.
var ErrNoChecks = errors.New("no check matches")

// check is one named rule.
type check struct {
	name   string
	source string // citation of the rule's source
	rule   string // the rule in one sentence
	// spec marks a check that the seed spec alone requires; it runs at
	// both levels (its assertions adapt to the level). Other checks run
	// at LevelContract only.
	spec bool
	// writes marks a check whose requests change the inventory on a
	// conforming server; -read-only skips it.
	writes bool
	run    func(c *checker)
}

// CheckInfo describes a check, for listing.
type CheckInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Rule   string `json:"rule"`
	// Spec is set for checks that run at LevelSpec too.
	Spec bool `json:"spec"`
	// Writes is set for checks that -read-only skips.
	Writes bool `json:"writes"`
}

// Checks lists the checks that run at the given level, in run order.
func Checks(level Level) []CheckInfo {
	var out []CheckInfo
	for _, ch := range allChecks() {
		if level == LevelSpec && !ch.spec {
			continue
		}
		out = append(out, CheckInfo{Name: ch.name, Source: ch.source, Rule: ch.rule, Spec: ch.spec, Writes: ch.writes})
	}
	return out
}

// allChecks is the registry, in run order. The order is for readable
// output only: no check depends on another having run.
func allChecks() []*check {
	var all []*check
	for _, group := range [][]*check{
		listChecks(), cacheChecks(), routeChecks(), authChecks(), orderChecks(), petIDChecks(),
		mediaChecks(), sizeChecks(), bodyChecks(), updateChecks(),
		responseChecks(), concurrencyChecks(), headChecks(), timeoutChecks(), malformedChecks(),
		consistencyChecks(),
	} {
		all = append(all, group...)
	}
	return all
}

// runner holds a validated configuration and what the run learnt about
// the target as a whole.
type runner struct {
	cfg    Config
	filter *regexp.Regexp
	skip   *regexp.Regexp // Config.Skip, nil when empty

	mu sync.Mutex
	// refused says how the key was refused by the first request, "" when
	// it was not.
	refused string
	// foreign lists the answers of failures that came from something in
	// front of the API.
	foreign []foreignAnswer
	// faultErr is set when a fault of the consistency run's schedule
	// could not be applied (ErrFault): the run stops there.
	faultErr error
}

// noteForeign remembers an answer that came from something in front of
// the API, once per request line.
func (rn *runner) noteForeign(check string, ex *exchange, evidence string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	req := ex.req.method + " " + rn.scrub(ex.url)
	for _, f := range rn.foreign {
		if f.check == check && f.request == req {
			return
		}
	}
	rn.foreign = append(rn.foreign, foreignAnswer{check: check, request: req, evidence: evidence})
}

func newRunner(cfg Config) (*runner, error) {
	c, re, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	rn := &runner{cfg: c, filter: re}
	if c.Skip != "" {
		rn.skip = regexp.MustCompile(c.Skip) // normalized compiled it
	}
	return rn, nil
}

// selected returns the checks to run, in order.
func (rn *runner) selected() ([]*check, error) {
	var out []*check
	for _, ch := range allChecks() {
		if rn.cfg.Level == LevelSpec && !ch.spec {
			continue
		}
		if rn.filter != nil && !rn.filter.MatchString(ch.name) {
			continue
		}
		if rn.skip != nil && rn.skip.MatchString(ch.name) {
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

// probe sends one list request and fails with ErrUnreachable when no
// answer comes. An answer, whatever its status, means the target is
// reachable; a note is returned when it looks like the wrong base URL.
func (rn *runner) probe(ctx context.Context) (note string, err error) {
	ex := rn.send(ctx, request{method: http.MethodGet, path: "/inventory"})
	if ex.err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("conformancetest: GET %s/inventory: %w: %s", rn.cfg.BaseURL, ErrUnreachable, rn.scrub(ex.err.Error()))
	}
	if ex.resp.status == http.StatusUnauthorized {
		rn.mu.Lock()
		rn.refused = fmt.Sprintf("GET %s/inventory with it answered %s", rn.cfg.BaseURL, errorSummary(ex.resp))
		if ev := notFromAPI(ex); ev != "" {
			rn.refused += " (" + ev + ")"
		}
		rn.mu.Unlock()
	}
	if ex.resp.status == http.StatusNotFound {
		if _, err := decodeJSON(ex.resp.body); err != nil {
			return fmt.Sprintf("GET %s/inventory answered 404 with a body that is not JSON: is the base URL right, version segment included (e.g. .../v1)?", rn.cfg.BaseURL), nil
		}
	}
	return "", nil
}

// RunChecks runs the selected checks against cfg.BaseURL, one after the
// other, and returns their results. It returns an error only when the
// configuration is invalid, when Config.Run selects nothing (ErrNoChecks)
// or when the target cannot be reached at all (ErrUnreachable); failing
// checks are results, not errors.
//
// When ctx ends mid-run (Ctrl-C in the command), the running check stops,
// the quantities it changed are restored, the checks left are skipped and
// Report.Interrupted is set.
func RunChecks(ctx context.Context, cfg Config) (*Report, error) {
	rn, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	checks, err := rn.selected()
	if err != nil {
		return nil, err
	}
	rep := &Report{BaseURL: rn.cfg.BaseURL, Replicas: rn.cfg.Replicas, Level: rn.cfg.Level, ReadOnly: rn.cfg.ReadOnly, Started: time.Now()}
	note, err := rn.probe(ctx)
	if err != nil {
		return nil, err
	}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	for _, ch := range checks {
		var res Result
		if ctx.Err() != nil {
			rep.Interrupted = true
			res = Result{Name: ch.name, Source: ch.source, Rule: ch.rule, Outcome: Skip, Reason: "the run was interrupted before this check"}
		} else {
			res = rn.runCheck(ctx, ch)
		}
		if rn.faultErr != nil {
			// A broken harness: nothing after it is judged.
			rn.cfg.HTTPClient.CloseIdleConnections()
			return nil, rn.faultErr
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
	rep.Headlines = rn.headlines(rep)
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

// abort stops a check; runCheck recovers it.
type abort struct{}

// runCheck runs one check and always restores what it changed.
func (rn *runner) runCheck(ctx context.Context, ch *check) (res Result) {
	res = Result{Name: ch.name, Source: ch.source, Rule: ch.rule}
	if rn.cfg.ReadOnly && ch.writes {
		res.Outcome = Skip
		res.Reason = "read-only run: this check changes quantities (a PATCH that succeeds)"
		return res
	}
	start := time.Now()
	c := &checker{rn: rn, ch: ch, ctx: ctx, res: &res, touched: map[int64]bool{}, guarded: map[int64]bool{}, sent: map[int64]bool{}}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(abort); !ok {
					c.addFailure(Failure{Problem: fmt.Sprintf("the check itself panicked (a bug in conformancetest): %v\n%s", v, debug.Stack())})
				}
			}
		}()
		ch.run(c)
	}()
	c.restore()
	res.Duration = time.Since(start)
	if c.skipped && rn.keyRefusal() != "" {
		res.Reason = "the API key was refused (see the first lines of the report), so: " + res.Reason
	}
	switch {
	case len(res.Failures) > 0:
		res.Outcome = Fail
		res.Reason = ""
	case c.skipped:
		res.Outcome = Skip
	case len(c.notJudged) > 0 && ctx.Err() == nil:
		res.Outcome = Skip
		res.Reason = "not judged through the intermediary in front of the API: " + strings.Join(c.notJudged, "; ") +
			"; every other request of the check got the answer the rule requires. Run the suite against the API directly to judge these."
	case ctx.Err() != nil:
		res.Outcome = Skip
		res.Reason = "the run was interrupted during this check"
	default:
		res.Outcome = Pass
	}
	return res
}
