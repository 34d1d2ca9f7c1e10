package suite

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// Checker is what a check runs with: it sends requests, records what
// fails, discovers pets, and remembers what to restore.
type Checker struct {
	rn  *Runner
	ch  *Check
	ctx context.Context
	res *report.Result

	mu      sync.Mutex // guards res, sent, patched, notJudged (the concurrency check sends from goroutines)
	skipped bool

	// snapshot is the inventory before the check's first PATCH; restore
	// compares with it.
	snapshot   map[int64]wire.Item
	snapshotOK bool
	// touched pets are changed on purpose; guarded pets are targets of
	// requests that must be rejected.
	touched, guarded map[int64]bool
	// sent holds every integer that appears in a PATCH body of this
	// check, to tell our own effects from other clients' writes.
	sent map[int64]bool
	// patched holds the pet ids this check sent PATCHes to.
	patched map[int64]bool
	// notJudged lists the requests an intermediary refused before the
	// API saw them (see NoteNotJudged).
	notJudged []string
	// retryUntil is when the restore stops retrying an answer 503 or
	// none (see RetryRestoreUntil); zero: it does not retry.
	retryUntil time.Time
}

// abort stops a check; runCheck recovers it.
type abort struct{}

// Abort stops the check where it stands: the run was interrupted, or a
// failure recorded already says why it cannot go on.
func (c *Checker) Abort() { panic(abort{}) }

// Contract reports whether the run is at LevelContract, where every rule
// of the contract is judged.
func (c *Checker) Contract() bool { return c.rn.cfg.Level == report.LevelContract }

// AddFailure records a failure, key removed, once.
func (c *Checker) AddFailure(f report.Failure) {
	f.Problem = c.rn.client.Scrub(f.Problem)
	f.Expected = c.rn.client.Scrub(f.Expected)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.res.Failures {
		if g.Problem == f.Problem && g.Curl == f.Curl {
			return
		}
	}
	c.res.Failures = append(c.res.Failures, f)
}

// Failf records that ex (nil when no single request shows it) broke the
// rule; the check goes on.
func (c *Checker) Failf(ex *wire.Exchange, expected, format string, args ...any) {
	f := report.Failure{Problem: fmt.Sprintf(format, args...), Expected: expected}
	if ex != nil {
		f.Problem = ex.Req.Method + " " + ex.Req.Path + ": " + f.Problem
		if ev := wire.NotFromAPI(ex); ev != "" {
			f.Problem += "; " + ev
			name := ""
			if c.ch != nil {
				name = c.ch.Name
			}
			c.rn.noteForeign(name, ex, c.rn.client.Scrub(ev))
		}
		f.Exchange = c.rn.client.Record(ex)
		f.Curl = c.rn.client.Curl(ex)
	}
	c.AddFailure(f)
}

// Fatalf records a failure and stops the check.
func (c *Checker) Fatalf(ex *wire.Exchange, expected, format string, args ...any) {
	c.Failf(ex, expected, format, args...)
	c.Abort()
}

// Skipf stops the check as skipped, with the reason.
func (c *Checker) Skipf(format string, args ...any) {
	c.skipped = true
	c.res.Reason = c.rn.client.Scrub(fmt.Sprintf(format, args...))
	c.Abort()
}

// Do sends r and returns the answer; a transport error stops the check.
func (c *Checker) Do(r wire.Request) *wire.Exchange {
	ex := c.Try(r)
	if ex.Err != nil {
		if c.ctx.Err() != nil {
			c.Abort() // interrupted: not the target's fault
		}
		c.Fatalf(ex, "an HTTP answer", "no answer: %v", ex.Err)
	}
	return ex
}

// Try sends r and returns the exchange, transport error included. It is
// safe from several goroutines. Every answer is looked at for an echoed
// key and, at LevelContract, against the OpenAPI document.
func (c *Checker) Try(r wire.Request) *wire.Exchange {
	if r.Method == http.MethodPatch {
		c.protect()
		c.noteSent(r)
	}
	ex := c.rn.client.Send(c.ctx, r)
	c.mu.Lock()
	c.res.Requests++
	c.mu.Unlock()
	if ex.Err != nil {
		return ex
	}
	if wire.Echoes(ex.Resp, c.rn.cfg.APIKey) {
		c.Failf(ex, "no part of the Authorization header in any answer (CONTRACT.md §Every response)", "the answer echoes the API key (shown here as %s)", wire.KeyVar)
	}
	if _, _, refused := wire.FrontRefusal(ex); c.Contract() && !ex.Resp.Truncated && !refused {
		// (A refusal in front of the API is the check's to note as not
		// judged: it is no answer of the API.)
		if op, ok := wire.OperationFor(r.Method, r.Path); ok && r.Method == http.MethodHead {
			if !slices.Contains(wire.Documented[op], ex.Resp.Status) {
				c.Failf(ex, "an answer the OpenAPI document (inventory/openapi.yaml) describes", "the answer does not match the OpenAPI document: status %d is not documented for %s", ex.Resp.Status, op)
			}
		} else if ok {
			body, err := ex.Resp.IdentityBody()
			if errors.Is(err, wire.ErrTooLarge) {
				return ex
			}
			if err != nil {
				c.Failf(ex, "a body encoded as its Content-Encoding says", "%v", err)
				return ex
			}
			err = wire.ValidateResponseBody(op, ex.Resp.Status, body)
			if err != nil {
				c.Failf(ex, "an answer the OpenAPI document (inventory/openapi.yaml) describes", "the answer does not match the OpenAPI document: %v", err)
			}
		}
	}
	return ex
}

var numberRE = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)

// noteSent remembers the integers of a PATCH body and its pet id.
func (c *Checker) noteSent(r wire.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.patched == nil {
		c.patched = map[int64]bool{}
	}
	if id, err := strconv.ParseInt(strings.TrimPrefix(r.Path, "/inventory/"), 10, 64); err == nil {
		c.patched[id] = true
	}
	if len(r.Body) > 4096 {
		return // padding: a number, if any, is near the start
	}
	for _, m := range numberRE.FindAll(r.Body, -1) {
		if f, ok := new(big.Rat).SetString(string(m)); ok && len(m) < 40 && f.IsInt() && f.Num().IsInt64() {
			c.sent[f.Num().Int64()] = true
		}
	}
}

// List fetches the inventory with the strict list (wire.StateList), leniently
// parsed (the list checks judge its form; here it is only read): what a
// check learns of the pets, and restores, is never a state a deployment
// with a staleness bound held.
func (c *Checker) List() ([]wire.Item, *wire.Exchange, error) { return c.ListWith(wire.StateList()) }

// ListWith sends the list r and parses it as List does.
func (c *Checker) ListWith(r wire.Request) ([]wire.Item, *wire.Exchange, error) {
	ex := c.rn.client.Send(c.ctx, r)
	c.mu.Lock()
	c.res.Requests++
	c.mu.Unlock()
	if ex.Err != nil {
		return nil, ex, ex.Err
	}
	items, err := wire.ParseItems(ex.Resp)
	return items, ex, err
}

// Pets returns the inventory, or skips the check when it cannot be read
// or is empty.
func (c *Checker) Pets() []wire.Item {
	items, ex, err := c.List()
	if err != nil {
		if ex.Err != nil && c.ctx.Err() != nil {
			c.Abort()
		}
		c.Skipf("cannot discover pets: %v (see list/ok)", err)
	}
	if len(items) == 0 {
		c.Skipf("the inventory is empty: this check needs at least one pet")
	}
	return items
}

// AnyPet returns a listed pet.
func (c *Checker) AnyPet() wire.Item { return c.Pets()[0] }

// UnlistedID returns a valid petId that the list does not show, for
// requests that must answer 404.
func (c *Checker) UnlistedID() int64 {
	items, ex, err := c.List()
	if err != nil {
		if ex.Err != nil && c.ctx.Err() != nil {
			c.Abort()
		}
		c.Skipf("cannot discover pets to choose an unlisted id: %v (see list/ok)", err)
	}
	return wire.Unlisted(items)
}

// Touch says the check changes pet id on purpose; restore puts its
// quantity back.
func (c *Checker) Touch(id int64) {
	c.protect()
	c.touched[id] = true
}

// Target returns the path of a pet to aim requests at that must be
// rejected before the store is reached; it skips the check when there is
// none (see TargetPath).
func (c *Checker) Target() string {
	p, reason := c.TargetPath()
	if p == "" {
		c.Skipf("%s", reason)
	}
	return p
}

// TargetPath returns a real pet when the run may write (so that a server
// that wrongly accepts is seen accepting, and is then restored), else an
// unlisted id, which the contract's check order makes safe. At LevelSpec,
// which fixes no check order, only a real pet will do; without one it
// returns "" and the reason.
func (c *Checker) TargetPath() (path, reason string) {
	items, ex, err := c.List()
	if err != nil && ex.Err != nil && c.ctx.Err() != nil {
		c.Abort()
	}
	if !c.rn.cfg.ReadOnly && err == nil && len(items) > 0 {
		c.protect()
		c.guarded[items[0].ID] = true
		return wire.ItemPath(items[0].ID), ""
	}
	if !c.Contract() {
		switch {
		case c.rn.cfg.ReadOnly:
			return "", "read-only run at level spec: the spec does not say that a body is checked before the pet is looked up, so this needs a real pet, which a wrongly accepting server would change"
		case err != nil:
			return "", fmt.Sprintf("cannot discover pets: %v (see list/ok)", err)
		}
		return "", "the inventory is empty: this needs at least one pet"
	}
	if err != nil {
		return "", fmt.Sprintf("cannot discover pets to choose an unlisted id: %v (see list/ok)", err)
	}
	return wire.ItemPath(wire.Unlisted(items)), ""
}

// protect takes the snapshot that restore compares with, once, before the
// check's first PATCH.
func (c *Checker) protect() {
	c.mu.Lock()
	taken := c.snapshot != nil
	c.mu.Unlock()
	if taken {
		return
	}
	items, _, err := c.List()
	snap := map[int64]wire.Item{}
	if err == nil {
		for _, it := range items {
			snap[it.ID] = it
		}
	}
	c.mu.Lock()
	if c.snapshot == nil {
		c.snapshot = snap
		// Without a readable inventory there is nothing to compare
		// with; list/ok reports why.
		c.snapshotOK = err == nil
	}
	c.mu.Unlock()
}

// restoreTimeout bounds the restoration after a check, which runs even
// when the run was interrupted.
const restoreTimeout = 30 * time.Second

// restore puts back every quantity the check changed, and reports changes
// it should not have caused. A pet changed by another client meanwhile
// (to a value this check never sent) is left alone.
func (c *Checker) restore() {
	if c.snapshot == nil || !c.snapshotOK {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), max(restoreTimeout, time.Until(c.retryUntil)+restoreTimeout))
	defer cancel()
	// Strict, as the snapshot (protect): a list up to a bound old could
	// miss this check's own writes, which would then stay.
	ex := c.sendRestoring(ctx, wire.StateList())
	if ex.Err != nil {
		c.Failf(ex, "the inventory readable after the check", "cannot read the inventory to restore the quantities this check may have changed: %v", ex.Err)
		return
	}
	items, err := wire.ParseItems(ex.Resp)
	if err != nil {
		c.Failf(ex, "the inventory readable after the check", "cannot read the inventory to restore the quantities this check may have changed: %v", err)
		return
	}
	now := map[int64]wire.Item{}
	for _, it := range items {
		now[it.ID] = it
		if _, before := c.snapshot[it.ID]; !before && c.patched[it.ID] {
			c.Failf(nil, "entries are created only through the Go API, never by PATCH (CONTRACT.md §Store semantics)",
				"after this check's PATCH requests the inventory holds a new entry for pet %d; remove it by hand", it.ID)
		}
	}
	for _, id := range sortedIDs(c.snapshot) {
		was := c.snapshot[id]
		cur, ok := now[id]
		if !ok {
			if c.patched[id] {
				c.Failf(nil, "entries are removed only through the Go API (CONTRACT.md §Store semantics)", "pet %d disappeared from the inventory during this check", id)
			}
			continue
		}
		mine := c.touched[id] || c.guarded[id] || c.sent[cur.Qty]
		if cur.Status != was.Status && mine {
			c.Failf(nil, "an update leaves status unchanged (spec §3, CONTRACT.md §Success)", "pet %d changed status from %q to %q during this check; it cannot be restored through the API", id, was.Status, cur.Status)
		}
		if cur.Qty == was.Qty || !mine {
			continue
		}
		if !c.touched[id] {
			c.Failf(nil, "requests that must be rejected change nothing",
				"pet %d's quantity changed from %d to %d during this check although it did not mean to change it; restoring it", id, was.Qty, cur.Qty)
		}
		body := []byte(fmt.Sprintf(`{"quantity":%d}`, was.Qty))
		rex := c.sendRestoring(ctx, wire.Request{Method: http.MethodPatch, Path: "/inventory/" + strconv.FormatInt(id, 10), ContentType: "application/json", Body: body})
		if rex.Err != nil || rex.Resp.Status != http.StatusOK {
			problem := "no answer"
			if rex.Err != nil {
				problem = rex.Err.Error()
			} else {
				problem = fmt.Sprintf("answered %d", rex.Resp.Status)
			}
			c.Failf(rex, "the quantity restored", "could not restore pet %d to quantity %d: %s; restore it by hand", id, was.Qty, problem)
		}
	}
}

// RetryRestoreUntil makes the restore after the check retry a request
// answered 503, or not at all, until t, honouring Retry-After: for a
// check that made the deployment unavailable on purpose (the consistency
// run's faults), which has until t to recover.
func (c *Checker) RetryRestoreUntil(t time.Time) { c.retryUntil = t }

// sendRestoring sends r for the restore, again while it is answered 503
// or not at all and retryUntil has not passed (see RetryRestoreUntil).
func (c *Checker) sendRestoring(ctx context.Context, r wire.Request) *wire.Exchange {
	for {
		ex := c.rn.client.Send(ctx, r)
		c.res.Requests++
		unavailable := ex.Err != nil || ex.Resp.Status == http.StatusServiceUnavailable
		if !unavailable || !time.Now().Before(c.retryUntil) || ctx.Err() != nil {
			return ex
		}
		select {
		case <-time.After(wire.RetryWait(ex, time.Until(c.retryUntil))):
		case <-ctx.Done():
			return ex
		}
	}
}

func sortedIDs(m map[int64]wire.Item) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Guard says that pet id is the target of requests that must be rejected:
// restore reports, and puts back, a change of it.
func (c *Checker) Guard(id int64) {
	c.protect()
	c.guarded[id] = true
}

// Ctx is the check's context: it ends when the run is interrupted.
func (c *Checker) Ctx() context.Context { return c.ctx }

// Settings is the run's configuration.
func (c *Checker) Settings() Settings { return c.rn.cfg }

// Scrub replaces the key in s with $INVENTORY_API_KEY (see
// wire.Client.Scrub).
func (c *Checker) Scrub(s string) string { return c.rn.client.Scrub(s) }

// Send sends r with ctx, unlike Do and Try neither judged nor counted:
// for a check that judges a history of its own (see CountRequest).
func (c *Checker) Send(ctx context.Context, r wire.Request) *wire.Exchange {
	return c.rn.client.Send(ctx, r)
}

// CountRequest counts a request sent with Send in the check's result.
func (c *Checker) CountRequest() {
	c.mu.Lock()
	c.res.Requests++
	c.mu.Unlock()
}

// UpdateResult calls update with the check's result, under the lock that
// guards it (a check's requests may run in goroutines): for what a check
// says beyond its failures (Detail, the consistency result).
func (c *Checker) UpdateResult(update func(res *report.Result)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	update(c.res)
}

// Failed reports whether the check has recorded a failure.
func (c *Checker) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.res.Failures) > 0
}

// Sleep waits d, and stops the check when the run is interrupted.
func (c *Checker) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
		c.Abort()
	}
}

// NoteNotJudged records a request of the check that an intermediary kept
// from the API: the check is then not judged through it (a skip that says
// so) unless it failed on another request.
func (c *Checker) NoteNotJudged(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notJudged = append(c.notJudged, fmt.Sprintf(format, args...))
}

// StopRun stops the whole run with err once this check returns: the
// harness broke (a fault of the consistency run's schedule could not be
// applied), so nothing after it is judged.
func (c *Checker) StopRun(err error) {
	c.rn.mu.Lock()
	defer c.rn.mu.Unlock()
	c.rn.harnessErr = err
}

// Rule is the rule of the check that runs, in one sentence.
func (c *Checker) Rule() string { return c.ch.Rule }
