package conformancetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// checker is what a check runs with: it sends requests, records what
// fails, discovers pets, and remembers what to restore.
type checker struct {
	rn  *runner
	ch  *check
	ctx context.Context
	res *Result

	mu      sync.Mutex // guards res, sent, patched (the concurrency check sends from goroutines)
	skipped bool

	// snapshot is the inventory before the check's first PATCH; restore
	// compares with it.
	snapshot   map[int64]item
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
	// API saw them (see refusedInFront).
	notJudged []string
}

// item is an inventory entry as the list answered it.
type item struct {
	id     int64
	qty    int64
	status string
}

func (c *checker) contract() bool { return c.rn.cfg.Level == LevelContract }

// addFailure records a failure, key removed, once.
func (c *checker) addFailure(f Failure) {
	f.Problem = c.rn.scrub(f.Problem)
	f.Expected = c.rn.scrub(f.Expected)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.res.Failures {
		if g.Problem == f.Problem && g.Curl == f.Curl {
			return
		}
	}
	c.res.Failures = append(c.res.Failures, f)
}

// failf records that ex (nil when no single request shows it) broke the
// rule; the check goes on.
func (c *checker) failf(ex *exchange, expected, format string, args ...any) {
	f := Failure{Problem: fmt.Sprintf(format, args...), Expected: expected}
	if ex != nil {
		f.Problem = ex.req.method + " " + ex.req.path + ": " + f.Problem
		if ev := notFromAPI(ex); ev != "" {
			f.Problem += "; " + ev
			name := ""
			if c.ch != nil {
				name = c.ch.name
			}
			c.rn.noteForeign(name, ex, c.rn.scrub(ev))
		}
		f.Exchange = c.rn.record(ex)
		f.Curl = c.rn.curl(ex)
	}
	c.addFailure(f)
}

// fatalf records a failure and stops the check.
func (c *checker) fatalf(ex *exchange, expected, format string, args ...any) {
	c.failf(ex, expected, format, args...)
	panic(abort{})
}

// skipf stops the check as skipped, with the reason.
func (c *checker) skipf(format string, args ...any) {
	c.skipped = true
	c.res.Reason = c.rn.scrub(fmt.Sprintf(format, args...))
	panic(abort{})
}

// do sends r and returns the answer; a transport error stops the check.
func (c *checker) do(r request) *exchange {
	ex := c.try(r)
	if ex.err != nil {
		if c.ctx.Err() != nil {
			panic(abort{}) // interrupted: not the target's fault
		}
		c.fatalf(ex, "an HTTP answer", "no answer: %v", ex.err)
	}
	return ex
}

// try sends r and returns the exchange, transport error included. It is
// safe from several goroutines. Every answer is looked at for an echoed
// key and, at LevelContract, against the OpenAPI document.
func (c *checker) try(r request) *exchange {
	if r.method == http.MethodPatch {
		c.protect()
		c.noteSent(r)
	}
	ex := c.rn.send(c.ctx, r)
	c.mu.Lock()
	c.res.Requests++
	c.mu.Unlock()
	if ex.err != nil {
		return ex
	}
	if c.rn.echoes(ex.resp, c.rn.cfg.APIKey) {
		c.failf(ex, "no part of the Authorization header in any answer (CONTRACT.md §Every response)", "the answer echoes the API key (shown here as %s)", keyVar)
	}
	if _, _, refused := frontRefusal(ex); c.contract() && !ex.resp.truncated && !refused {
		// (A refusal in front of the API is the check's to note as not
		// judged: it is no answer of the API.)
		if op, ok := operationFor(r.method, r.path); ok && r.method == http.MethodHead {
			if !slices.Contains(documented[op], ex.resp.status) {
				c.failf(ex, "an answer the OpenAPI document (inventory/openapi.yaml) describes", "the answer does not match the OpenAPI document: status %d is not documented for %s", ex.resp.status, op)
			}
		} else if ok {
			body, err := ex.resp.identityBody()
			if errors.Is(err, errTooLarge) {
				return ex
			}
			if err != nil {
				c.failf(ex, "a body encoded as its Content-Encoding says", "%v", err)
				return ex
			}
			err = validateResponseBody(op, ex.resp.status, body)
			if err != nil {
				c.failf(ex, "an answer the OpenAPI document (inventory/openapi.yaml) describes", "the answer does not match the OpenAPI document: %v", err)
			}
		}
	}
	return ex
}

// operationFor maps a request to the document's operation.
func operationFor(method, path string) (string, bool) {
	p, _, _ := strings.Cut(path, "?")
	switch {
	case p == "/inventory":
		switch method {
		case http.MethodGet:
			return listInventory, true
		case http.MethodHead:
			return headInventory, true
		}
		return otherMethodOp, true
	case strings.HasPrefix(p, "/inventory/") && !strings.Contains(p[len("/inventory/"):], "/"):
		if method == http.MethodPatch {
			return updateInventory, true
		}
		return otherMethodOp, true
	}
	return "", false
}

var numberRE = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)

// noteSent remembers the integers of a PATCH body and its pet id.
func (c *checker) noteSent(r request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.patched == nil {
		c.patched = map[int64]bool{}
	}
	if id, err := strconv.ParseInt(strings.TrimPrefix(r.path, "/inventory/"), 10, 64); err == nil {
		c.patched[id] = true
	}
	if len(r.body) > 4096 {
		return // padding: a number, if any, is near the start
	}
	for _, m := range numberRE.FindAll(r.body, -1) {
		if f, ok := new(big.Rat).SetString(string(m)); ok && len(m) < 40 && f.IsInt() && f.Num().IsInt64() {
			c.sent[f.Num().Int64()] = true
		}
	}
}

// list fetches the inventory with the strict list (stateList), leniently
// parsed (the list checks judge its form; here it is only read): what a
// check learns of the pets, and restores, is never a state a deployment
// with a staleness bound held.
func (c *checker) list() ([]item, *exchange, error) { return c.listWith(stateList()) }

// listWith sends the list r and parses it as list does.
func (c *checker) listWith(r request) ([]item, *exchange, error) {
	ex := c.rn.send(c.ctx, r)
	c.mu.Lock()
	c.res.Requests++
	c.mu.Unlock()
	if ex.err != nil {
		return nil, ex, ex.err
	}
	items, err := parseItems(ex.resp)
	return items, ex, err
}

func parseItems(resp *response) ([]item, error) {
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("GET /inventory answered %d, not 200", resp.status)
	}
	if resp.truncated {
		return nil, fmt.Errorf("GET /inventory answered a list of over %d bytes, more than the suite reads of an answer", maxResponseBytes)
	}
	v, err := decodeJSON(resp.body)
	if err != nil {
		return nil, fmt.Errorf("GET /inventory: %v", err)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("GET /inventory answered %s, not an array", describe(v))
	}
	items := make([]item, 0, len(arr))
	for i, e := range arr {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("GET /inventory: item %d is not an object", i)
		}
		id, ok1 := integerValue(obj["petId"])
		q, ok2 := integerValue(obj["quantity"])
		st, ok3 := obj["status"].(string)
		if !ok1 || !ok2 || !ok3 || !id.IsInt64() || !q.IsInt64() {
			return nil, fmt.Errorf("GET /inventory: item %d lacks an integer petId, an integer quantity or a string status", i)
		}
		items = append(items, item{id: id.Int64(), qty: q.Int64(), status: st})
	}
	return items, nil
}

// pets returns the inventory, or skips the check when it cannot be read
// or is empty.
func (c *checker) pets() []item {
	items, ex, err := c.list()
	if err != nil {
		if ex.err != nil && c.ctx.Err() != nil {
			panic(abort{})
		}
		c.skipf("cannot discover pets: %v (see list/ok)", err)
	}
	if len(items) == 0 {
		c.skipf("the inventory is empty: this check needs at least one pet")
	}
	return items
}

// anyPet returns a listed pet.
func (c *checker) anyPet() item { return c.pets()[0] }

// unlistedID returns a valid petId that the list does not show, for
// requests that must answer 404.
func (c *checker) unlistedID() int64 {
	items, ex, err := c.list()
	if err != nil {
		if ex.err != nil && c.ctx.Err() != nil {
			panic(abort{})
		}
		c.skipf("cannot discover pets to choose an unlisted id: %v (see list/ok)", err)
	}
	return unlisted(items)
}

// unlisted prefers the largest int64, which also probes the top of the
// range.
func unlisted(items []item) int64 {
	ids := map[int64]bool{}
	for _, it := range items {
		ids[it.id] = true
	}
	id := int64(math.MaxInt64)
	for ids[id] {
		id--
	}
	return id
}

// touch says the check changes pet id on purpose; restore puts its
// quantity back.
func (c *checker) touch(id int64) {
	c.protect()
	c.touched[id] = true
}

// target returns the path of a pet to aim requests at that must be
// rejected before the store is reached; it skips the check when there is
// none (see targetPath).
func (c *checker) target() string {
	p, reason := c.targetPath()
	if p == "" {
		c.skipf("%s", reason)
	}
	return p
}

// targetPath returns a real pet when the run may write (so that a server
// that wrongly accepts is seen accepting, and is then restored), else an
// unlisted id, which the contract's check order makes safe. At LevelSpec,
// which fixes no check order, only a real pet will do; without one it
// returns "" and the reason.
func (c *checker) targetPath() (path, reason string) {
	items, ex, err := c.list()
	if err != nil && ex.err != nil && c.ctx.Err() != nil {
		panic(abort{})
	}
	if !c.rn.cfg.ReadOnly && err == nil && len(items) > 0 {
		c.protect()
		c.guarded[items[0].id] = true
		return itemPath(items[0].id), ""
	}
	if !c.contract() {
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
	return itemPath(unlisted(items)), ""
}

// protect takes the snapshot that restore compares with, once, before the
// check's first PATCH.
func (c *checker) protect() {
	c.mu.Lock()
	taken := c.snapshot != nil
	c.mu.Unlock()
	if taken {
		return
	}
	items, _, err := c.list()
	snap := map[int64]item{}
	if err == nil {
		for _, it := range items {
			snap[it.id] = it
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
func (c *checker) restore() {
	if c.snapshot == nil || !c.snapshotOK {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), restoreTimeout)
	defer cancel()
	// Strict, as the snapshot (protect): a list up to a bound old could
	// miss this check's own writes, which would then stay.
	ex := c.rn.send(ctx, stateList())
	c.res.Requests++
	if ex.err != nil {
		c.failf(ex, "the inventory readable after the check", "cannot read the inventory to restore the quantities this check may have changed: %v", ex.err)
		return
	}
	items, err := parseItems(ex.resp)
	if err != nil {
		c.failf(ex, "the inventory readable after the check", "cannot read the inventory to restore the quantities this check may have changed: %v", err)
		return
	}
	now := map[int64]item{}
	for _, it := range items {
		now[it.id] = it
		if _, before := c.snapshot[it.id]; !before && c.patched[it.id] {
			c.failf(nil, "entries are created only through the Go API, never by PATCH (CONTRACT.md §Store semantics)",
				"after this check's PATCH requests the inventory holds a new entry for pet %d; remove it by hand", it.id)
		}
	}
	for _, id := range sortedIDs(c.snapshot) {
		was := c.snapshot[id]
		cur, ok := now[id]
		if !ok {
			if c.patched[id] {
				c.failf(nil, "entries are removed only through the Go API (CONTRACT.md §Store semantics)", "pet %d disappeared from the inventory during this check", id)
			}
			continue
		}
		mine := c.touched[id] || c.guarded[id] || c.sent[cur.qty]
		if cur.status != was.status && mine {
			c.failf(nil, "an update leaves status unchanged (spec §3, CONTRACT.md §Success)", "pet %d changed status from %q to %q during this check; it cannot be restored through the API", id, was.status, cur.status)
		}
		if cur.qty == was.qty || !mine {
			continue
		}
		if !c.touched[id] {
			c.failf(nil, "requests that must be rejected change nothing",
				"pet %d's quantity changed from %d to %d during this check although it did not mean to change it; restoring it", id, was.qty, cur.qty)
		}
		body := []byte(fmt.Sprintf(`{"quantity":%d}`, was.qty))
		rex := c.rn.send(ctx, request{method: http.MethodPatch, path: "/inventory/" + strconv.FormatInt(id, 10), contentType: "application/json", body: body})
		c.res.Requests++
		if rex.err != nil || rex.resp.status != http.StatusOK {
			problem := "no answer"
			if rex.err != nil {
				problem = rex.err.Error()
			} else {
				problem = fmt.Sprintf("answered %d", rex.resp.status)
			}
			c.failf(rex, "the quantity restored", "could not restore pet %d to quantity %d: %s; restore it by hand", id, was.qty, problem)
		}
	}
}

func sortedIDs(m map[int64]item) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// newQuantity returns a quantity different from each of avoid, from a
// small range that any implementation accepts; k varies it.
func newQuantity(k int, avoid ...int64) int64 {
	for q := int64(17 + 13*k); ; q++ {
		if !slices.Contains(avoid, q) {
			return q
		}
	}
}

func qtyBody(q int64) []byte { return []byte(fmt.Sprintf(`{"quantity":%d}`, q)) }

func itemPath(id int64) string { return "/inventory/" + strconv.FormatInt(id, 10) }

// errorSummary describes an answer briefly: `404 (code "not_found")`.
func errorSummary(resp *response) string {
	var e struct {
		Code any `json:"code"`
	}
	if json.Unmarshal(resp.body, &e) == nil {
		if s, ok := e.Code.(string); ok {
			return fmt.Sprintf("%d (code %q)", resp.status, s)
		}
	}
	return strconv.Itoa(resp.status)
}

// expectStatus fails when ex's status is not want.
func (c *checker) expectStatus(ex *exchange, want int, expected string) bool {
	if ex.resp.status != want {
		c.failf(ex, expected, "answered %s, not %d", errorSummary(ex.resp), want)
		return false
	}
	return true
}

// expectError checks an error answer: the status, an Error body whose
// status repeats it, and, at LevelContract, exactly the three members, a
// non-empty message and the code.
func (c *checker) expectError(ex *exchange, status int, code string) bool {
	expected := fmt.Sprintf("%d with an Error body", status)
	if c.contract() {
		expected = fmt.Sprintf("%d with an Error body, code %q", status, code)
	}
	if !c.expectStatus(ex, status, expected) {
		return false
	}
	if ex.req.method == http.MethodHead {
		return true
	}
	v, err := decodeJSON(ex.resp.body)
	if err == nil {
		err = validateError(v, status, c.contract())
	}
	if err != nil {
		c.failf(ex, expected, "the body is not a valid Error: %v", err)
		return false
	}
	if got := v.(map[string]any)["code"].(string); c.contract() && got != code {
		c.failf(ex, expected, "code %q, not %q", got, code)
		return false
	}
	return true
}

// expectItem checks a successful update's answer: 200 and the whole
// entry, with the given values.
func (c *checker) expectItem(ex *exchange, id, qty int64, status string) bool {
	expected := fmt.Sprintf(`200 with {"petId":%d,"quantity":%d,"status":%q}`, id, qty, status)
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return false
	}
	v, err := decodeJSON(ex.resp.body)
	if err == nil {
		err = validateItem(v, c.contract())
	}
	if err != nil {
		c.failf(ex, expected, "the body is not a valid InventoryItem: %v", err)
		return false
	}
	obj := v.(map[string]any)
	gotID, _ := integerValue(obj["petId"])
	gotQ, _ := integerValue(obj["quantity"])
	ok := true
	if !gotID.IsInt64() || gotID.Int64() != id {
		c.failf(ex, expected, "petId %s, not %d", gotID, id)
		ok = false
	}
	if !gotQ.IsInt64() || gotQ.Int64() != qty {
		c.failf(ex, expected, "quantity %s, not %d (the update sets the new count)", gotQ, qty)
		ok = false
	}
	if s := obj["status"].(string); s != status {
		c.failf(ex, expected, "status %q, not %q (an update leaves status unchanged)", s, status)
		ok = false
	}
	return ok
}
