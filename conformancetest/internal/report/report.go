package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
)

// Level selects which rules are checked.
type Level string

const (
	// LevelSpec checks only what the seed specification requires: the
	// statuses 200, 400, 401 and 404 and the shapes of the bodies. Use it to
	// judge an implementation that was not built on this project's
	// contract.
	LevelSpec Level = "spec"
	// LevelContract checks every rule of the project's docs/CONTRACT.md,
	// which closes the specification's gaps: error codes, headers, 405,
	// 413, 415, check order, concurrency, the OpenAPI document. It is the
	// default.
	LevelContract Level = "contract"
)

// KeyVar is what every output shows instead of the API key: the variable
// the curl commands read it from.
const KeyVar = "$INVENTORY_API_KEY"

// Outcome is the verdict of one check.
type Outcome string

const (
	Pass Outcome = "pass" // every request got the answer the rule requires
	Fail Outcome = "fail" // at least one did not; see Result.Failures
	Skip Outcome = "skip" // the check did not run; see Result.Reason
)

// Result is the outcome of one check. Nothing in it holds the API key:
// every place where the key was sent or echoed shows $INVENTORY_API_KEY.
type Result struct {
	Name    string  `json:"name"`    // e.g. "auth/missing-header"
	Outcome Outcome `json:"outcome"` // pass, fail or skip
	// Source cites the rule: "spec §4.2 rule 1", "CONTRACT.md §Authentication".
	Source string `json:"source"`
	// Rule states the rule in one sentence.
	Rule string `json:"rule"`
	// Reason says why the check was skipped.
	Reason string `json:"reason,omitempty"`
	// Failures lists what did not hold, each with its evidence.
	Failures []Failure `json:"failures,omitempty"`
	// Detail says what the check did and what it cost, for checks whose
	// cost depends on the target (the concurrency check's rounds,
	// requests and time).
	Detail string `json:"detail,omitempty"`
	// Requests is the number of requests the check sent.
	Requests int           `json:"requests"`
	Duration time.Duration `json:"durationNs"`
	// Visualization is the file that holds a picture of the failure
	// (Config.ConsistencyHTML, written by the consistency check), ""
	// when none was written.
	Visualization string `json:"visualization,omitempty"`
	// Consistency is what the consistency check judged and measured,
	// nil for every other check.
	Consistency *ConsistencyResult `json:"consistency,omitempty"`
}

// ConsistencyResult is what the consistency check judged and measured.
type ConsistencyResult struct {
	// History is the file the history of the run was saved to
	// (-consistency-history), or was read from (-consistency-replay).
	History string `json:"history,omitempty"`
	// Replayed is set when the history was not recorded by this run
	// but read back from History and judged again.
	Replayed bool `json:"replayed,omitempty"`
	// Staleness is the staleness bound the history was judged against
	// (Config.ConsistencyStaleness); zero is the strict promise.
	Staleness time.Duration `json:"stalenessNs"`
	// ObservedStaleness is the smallest bound, to the millisecond, for
	// which the history passes: 0 for a deployment that kept the strict
	// promise; nil when no bound makes it pass, or none was found in
	// time. Observed says it in words, with the reason when nil.
	ObservedStaleness *time.Duration `json:"observedStalenessNs"`
	Observed          string         `json:"observedStaleness"`
	// Faults are the faults of the run's schedule
	// (Config.ConsistencyFaults), in the order they were applied, each
	// with what it cost.
	Faults []FaultResult `json:"faults,omitempty"`
	// The requests of the history, by what became of them: every
	// request (Operations), lists answered 200 (StaleLists of them
	// marked stale), lists that failed (dropped), updates, those
	// answered 200 (UpdatesOK) and of those the ones that overlapped
	// another client's request (OverlappedUpdates: the concurrency the
	// verdict rests on), those of unknown outcome (RefusedUpdates of
	// them answered 4xx), and of those the ones no list showed (left
	// out).
	Operations        int `json:"operations"`
	Lists             int `json:"lists"`
	StaleLists        int `json:"staleLists"`
	FailedLists       int `json:"failedLists"`
	Updates           int `json:"updates"`
	UpdatesOK         int `json:"updatesOK"`
	OverlappedUpdates int `json:"overlappedUpdates"`
	UnknownUpdates    int `json:"unknownUpdates"`
	RefusedUpdates    int `json:"refusedUpdates"`
	LeftOut           int `json:"leftOutUpdates"`
	// MinUpdates is the fewest updates answered 200 the history could
	// pass with (Config.ConsistencyMinUpdates); StaleIfError the bound
	// lists marked stale were judged against
	// (Config.ConsistencyStaleIfError, zero: none may be); RecoveryLimit
	// how long after the last fault ended the deployment had to answer
	// a strict list and an update with 200 again
	// (Config.ConsistencyRecovery; zero in a replay of a history saved
	// without it: not judged).
	MinUpdates    int           `json:"minUpdates"`
	StaleIfError  time.Duration `json:"staleIfErrorNs"`
	RecoveryLimit time.Duration `json:"recoveryLimitNs"`
	// RecoveredAfter is how long after the last fault of the schedule
	// ended a strict list and an update were both answered 200 again;
	// nil when the run had no fault or the deployment did not recover
	// in time. Recovered says it in words ("recovered 2.4 s after the
	// last fault ended", or why not), "" without faults.
	RecoveredAfter *time.Duration `json:"recoveredAfterNs,omitempty"`
	Recovered      string         `json:"recovered,omitempty"`
	// Round is the longest round the run chose: how long its clients
	// sent between two barrier lists (rounds adapt to the latency
	// measured); zero in a replay.
	Round time.Duration `json:"roundNs,omitempty"`
}

// FaultResult is one fault of a consistency run's schedule: when it was
// applied, what it did, and what it cost the clients (the window without
// an update answered 200, the answers other than 200, the lists'
// availability). Its one home is package internal/linearize, which
// computes it from the history alone, for a run and a replay alike; its
// Line says it in one line.
type FaultResult = linearize.FaultResult

// Lines says in words what c holds, one line each, for the text and HTML
// reports; none for a nil c.
func (c *ConsistencyResult) Lines() []string {
	if c == nil {
		return nil
	}
	var out []string
	if c.Staleness > 0 {
		out = append(out, fmt.Sprintf("judged against a staleness bound of %v", c.Staleness))
	}
	if c.StaleIfError > 0 {
		out = append(out, fmt.Sprintf("lists marked stale judged against a stale-if-error bound of %v", c.StaleIfError))
	}
	if c.Observed != "" {
		out = append(out, "observed staleness: "+c.Observed)
	}
	out = append(out, c.density())
	for i := range c.Faults {
		out = append(out, c.Faults[i].Line())
	}
	if c.Recovered != "" {
		out = append(out, c.Recovered)
	}
	switch {
	case c.Replayed:
		out = append(out, "history read from "+c.History+" and judged again")
	case c.History != "":
		out = append(out, "history saved to "+c.History+" (judge it again with inventory-conformance -consistency-replay "+c.History+")")
	}
	return out
}

// density says how much the history holds, and so how much its verdict
// says.
func (c *ConsistencyResult) density() string {
	s := fmt.Sprintf("history: %d operations; %d lists answered 200", c.Operations, c.Lists)
	if c.StaleLists > 0 {
		s += fmt.Sprintf(" (%d marked stale)", c.StaleLists)
	}
	s += fmt.Sprintf("; %d updates answered 200 (%d of them overlapping another client's request) of %d sent", c.UpdatesOK, c.OverlappedUpdates, c.Updates)
	if c.MinUpdates > 0 {
		s += fmt.Sprintf(", at least %d needed", c.MinUpdates)
	}
	if c.Round > 0 {
		s += fmt.Sprintf("; rounds of up to %v between barrier lists", c.Round.Round(time.Millisecond))
	}
	return s
}

// Failure is one thing that did not hold, with the request that showed it.
type Failure struct {
	// Problem says what was wrong.
	Problem string `json:"problem"`
	// Expected says what the rule requires.
	Expected string `json:"expected,omitempty"`
	// Exchange is the request that showed it and the answer, when one
	// request did.
	Exchange *Exchange `json:"exchange,omitempty"`
	// Curl reproduces the request; it reads the key from the environment
	// variable INVENTORY_API_KEY.
	Curl string `json:"curl,omitempty"`
	// Kind names what broke the rule, in a form programs compare (the
	// consistency check's: "missed-update", "write-taken-back", …); ""
	// for the checks whose failures are one request's answer.
	Kind string `json:"kind,omitempty"`
	// Count is how many requests broke the rule the same way, when the
	// failure names the first of several (0: one).
	Count int `json:"count,omitempty"`
	// ByBaseURL counts, for stale lists (the consistency check's
	// "missed-update" and "older-than-bound"), those through each base
	// URL.
	ByBaseURL map[string]int `json:"byBaseURL,omitempty"`
	// Operations are the requests of the consistency run's history
	// involved, each with its place in the history and what it did there.
	Operations []Operation `json:"operations,omitempty"`
	// AfterFault is the fault of the consistency run's schedule the
	// failure followed (as given: "6s redis-failover"): the last applied
	// before the latest of its requests was sent; "" when none was.
	AfterFault string `json:"afterFault,omitempty"`
}

// Operation is a request of the consistency run's history involved in a
// failure.
type Operation struct {
	// Index is its place in the history (the requests ordered by call,
	// as -consistency-history saves them, from 0).
	Index int `json:"index"`
	// Role is what it did in the failure: "list" (the list that broke
	// the rule), "missed" (the update it missed), "written-by", …
	Role    string `json:"role"`
	Kind    string `json:"kind"` // "list" or "update"
	Client  int    `json:"client"`
	BaseURL string `json:"baseURL"`
	// CallNs and ReturnNs are when it was sent and answered, in
	// nanoseconds since the run started.
	CallNs   int64 `json:"callNs"`
	ReturnNs int64 `json:"returnNs"`
	// An update's pet and the quantity it sent.
	Pet      int64 `json:"petId,omitempty"`
	Quantity int64 `json:"quantity,omitempty"`
}

// Exchange records one request and its answer, key removed.
type Exchange struct {
	Request  RequestRecord   `json:"request"`
	Response *ResponseRecord `json:"response,omitempty"`
	// Error is the transport error when no answer came.
	Error string `json:"error,omitempty"`
}

// RequestRecord is a request as it was sent (headers the runner set).
type RequestRecord struct {
	Method string            `json:"method"`
	URL    string            `json:"url"`
	Header map[string]string `json:"header,omitempty"`
	// Body is the body, cut to a readable length when long; BodySize is
	// its real size.
	Body     string `json:"body,omitempty"`
	BodySize int    `json:"bodySize"`
	Chunked  bool   `json:"chunked,omitempty"`
}

// ResponseRecord is an answer as it came back.
type ResponseRecord struct {
	Status   int               `json:"status"`
	Header   map[string]string `json:"header,omitempty"`
	Body     string            `json:"body,omitempty"`
	BodySize int               `json:"bodySize"`
}

// Report is the result of a run.
type Report struct {
	BaseURL string `json:"baseURL"`
	// Replicas are the further base URLs of the deployment that the
	// consistency checks used (Config.Replicas).
	Replicas []string `json:"replicas,omitempty"`
	Level    Level    `json:"level"`
	ReadOnly bool     `json:"readOnly"`
	// Headlines are what to read first, before the results: the key was
	// refused (and what failed or was skipped because of it), or answers
	// came from something in front of the API rather than from it.
	Headlines []string  `json:"headlines,omitempty"`
	Started   time.Time `json:"started"`
	// Duration is the run's wall time.
	Duration time.Duration `json:"durationNs"`
	Results  []Result      `json:"results"`
	// Interrupted is set when the run's context ended before every
	// check ran; the checks left are skipped with that reason.
	Interrupted bool `json:"interrupted,omitempty"`
	// Notes are hints about the run as a whole, such as a base URL that
	// seems to miss its version segment.
	Notes []string `json:"notes,omitempty"`
}

// Counts returns the number of passed, failed and skipped checks.
func (r *Report) Counts() (passed, failed, skipped int) {
	for _, res := range r.Results {
		switch res.Outcome {
		case Pass:
			passed++
		case Fail:
			failed++
		case Skip:
			skipped++
		}
	}
	return passed, failed, skipped
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool {
	_, failed, _ := r.Counts()
	return failed > 0
}

// Summary is the one-line count: "41 passed, 1 failed, 3 skipped".
func (r *Report) Summary() string {
	p, f, s := r.Counts()
	return fmt.Sprintf("%d passed, %d failed, %d skipped", p, f, s)
}

// Result returns the result of the check with the given name.
func (r *Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Name == name {
			return res, true
		}
	}
	return Result{}, false
}

// SortedHeaderNames lists a record's header names in order, for output.
func SortedHeaderNames(h map[string]string) []string {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
