package conformancetest

import (
	"io"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// The results of a run and their outputs live in package report (text,
// JUnit, HTML, JSON, curl); these are the same types under the names
// users of this package know.

// Outcome is the verdict of one check: Pass, Fail or Skip.
type Outcome = report.Outcome

// The outcomes.
const (
	Pass = report.Pass // every request got the answer the rule requires
	Fail = report.Fail // at least one did not; see Result.Failures
	Skip = report.Skip // the check did not run; see Result.Reason
)

// Result is the outcome of one check. Nothing in it holds the API key:
// every place where the key was sent or echoed shows $INVENTORY_API_KEY.
type Result = report.Result

// ConsistencyResult is what the consistency check judged and measured
// (Result.Consistency).
type ConsistencyResult = report.ConsistencyResult

// FaultResult is one fault of the consistency run's schedule, when it
// was applied and what it cost (ConsistencyResult.Faults).
type FaultResult = report.FaultResult

// Failure is one thing that did not hold, with the request that showed it.
type Failure = report.Failure

// Exchange records one request and its answer, key removed.
type Exchange = report.Exchange

// RequestRecord is a request as it was sent (headers the runner set).
type RequestRecord = report.RequestRecord

// ResponseRecord is an answer as it came back.
type ResponseRecord = report.ResponseRecord

// Report is the result of a run (its fields are those of report.Report);
// it writes itself as text (WriteText), JUnit XML (WriteJUnit) and HTML
// (WriteHTML), and encodes as JSON. Its methods are package report's.
type Report report.Report

func (r *Report) rep() *report.Report { return (*report.Report)(r) }

// Counts returns the number of passed, failed and skipped checks.
func (r *Report) Counts() (passed, failed, skipped int) { return r.rep().Counts() }

// Failed reports whether any check failed.
func (r *Report) Failed() bool { return r.rep().Failed() }

// Summary is the one-line count: "41 passed, 1 failed, 3 skipped".
func (r *Report) Summary() string { return r.rep().Summary() }

// Result returns the result of the check with the given name.
func (r *Report) Result(name string) (Result, bool) { return r.rep().Result(name) }

// WriteText writes the report as people read it: a table of every check
// (result, name, source, and the reason of a skip), the details of every
// failure with a curl command that reproduces it, and the summary line
// "N passed, N failed, N skipped". verbose adds each check's rule.
func (r *Report) WriteText(w io.Writer, verbose bool) error { return r.rep().WriteText(w, verbose) }

// WriteJUnit writes the report as a JUnit XML document: one testsuite,
// one testcase per check (classname: the check's group, such as "auth"),
// failures with their details and curl commands, skips with their reason.
func (r *Report) WriteJUnit(w io.Writer) error { return r.rep().WriteJUnit(w) }

// WriteHTML writes the report as one self-contained HTML page (see
// report.Report.WriteHTML): the verdict first, the failed checks open
// with their evidence and curl lines, every value from the target
// escaped, nothing loaded from elsewhere.
func (r *Report) WriteHTML(w io.Writer) error { return r.rep().WriteHTML(w) }

// Operation is a request of the consistency run's history involved in a
// failure (Failure.Operations).
type Operation = report.Operation
