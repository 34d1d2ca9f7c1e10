// Package conformancetest checks, over HTTP only, that a deployment of the
// Pet Store inventory API behaves as the specification (docs/SPEC.md in
// the petinventory repository) and the petinventory contract
// (docs/CONTRACT.md) require. It imports nothing from the petinventory
// repository, and outside the standard library only porcupine, the
// linearizability checker (which has no dependencies), so it can judge
// any implementation, in any language, by its URL.
//
// This package is the suite's public API: Config and its normalization,
// Run and RunChecks, the list of checks, the fault schedule's Fault and
// ReplayConsistency. It assembles the run's registry from the tables of
// its internal packages, one job each: internal/wire speaks HTTP (the
// requests, the answers, the key kept out of all that is shown, the
// OpenAPI document's rules), internal/suite runs checks (the checker a
// check runs with, the runner), internal/checks holds every area's
// checks, one named function each in its area's table, and
// internal/consistency the consistency check with its fault schedule and
// saved histories. The judgement of a consistency history (the model,
// porcupine's verdict and the words of a failure) is package
// internal/linearize's, and the outputs (text, JUnit, JSON, HTML, curl)
// are package internal/report's; the types of the report are exported
// here under the same names.
//
// Every rule is a named check ("auth/missing-header", "body/trailing-data",
// "concurrency/parallel-updates", "head/not-modified", "body/stalled",
// "consistency/linearizable", …) that cites its source ("spec §4.2 rule
// 1", "CONTRACT.md §Authentication") and ends as pass, fail or skip (with
// the reason). A failure carries what was sent, what came back, what was
// expected, and a curl command that reproduces it. The API key is never
// part of any output: it shows as $INVENTORY_API_KEY, also where a server
// echoes it (which fails the check that saw it).
//
// Use it in three ways:
//
//   - In go test, against a server you start: Run(t, Config{...}) runs each
//     check as a subtest.
//   - From Go code, for a report: RunChecks returns a Report, which writes
//     itself as text (WriteText), JUnit XML (WriteJUnit) or one
//     self-contained HTML page (WriteHTML) in which every value from the
//     target is escaped. Run writes the same page when Config.HTMLReport
//     names a file.
//   - From the command line: cmd/inventory-conformance, for staging or
//     production.
//
// # Levels
//
// LevelContract (the default) checks every rule of docs/CONTRACT.md: error
// codes, the WWW-Authenticate and Allow headers, 405/413/415 (405 also for
// methods outside the standard set), the check order, strict JSON, the
// response headers, the list's gzip coding and revalidation (ETag,
// If-None-Match, 304), concurrency, and every answer against the OpenAPI
// document. Every request states its Accept-Encoding and no answer is
// decoded by the client, so the checks see the bytes the server sent. LevelSpec checks only what the seed
// specification requires (200/400/401/404 and the shapes of the bodies),
// to judge an implementation that did not adopt the contract.
//
// # Safety
//
// The checks discover pets with the list call and aim 404 checks at an id
// the list does not show. Before a check's first update the inventory is
// read, with a strict list (Cache-Control: no-cache) as every list the
// suite learns state from, so that a deployment whose default lists may
// be up to a staleness bound old never has a stale quantity written back;
// afterwards every quantity the check changed is put back, also when
// the check failed midway or the run's context was cancelled (Ctrl-C in
// the command). A change the check did not intend is reported as a failure
// and undone, unless another client made it meanwhile (to a value the check
// never sent). No check depends on another having run. Config.ReadOnly
// skips every check whose requests would change a conforming server.
//
// # OpenAPI
//
// The rules of the project's OpenAPI document (inventory/openapi.yaml) are
// embedded in this module (internal/wire), because it may not import the
// repository: testdata/openapi-rules.json holds what kin-openapi reads in
// the document (a test in the repository's internal/e2e module derives
// and compares it), and the module's tests prove that the embedded rules
// agree with that file.
//
// # Consistency across replicas
//
// consistency/linearizable runs only when Config.Consistency gives it a
// duration. Clients (Config.ConsistencyClients) spread over BaseURL and
// Config.Replicas, the other replicas of the deployment, list and update a
// few pets at once, each write with a quantity of its own, and record each
// request's call and return on one monotonic clock. The history is then
// checked with porcupine (github.com/anishathalye/porcupine), as etcd's
// robustness tests check etcd: every list and update must appear to take
// effect at one instant between its call and its return, on one copy of
// the inventory. An update with no answer or a 503 may have taken effect
// or not. The clients run in rounds: at the end of each they wait until
// nothing is in flight and one strict list (Cache-Control: no-cache) is
// sent alone; it fixes the state there, so that each piece of the
// history is checked on its own, and the check stays fast. A round's time
// starts when that list has returned, and its length follows the
// latency met (100 ms on the loopback, up to a second across a WAN), so
// that a run holds about as many requests as its clients can send. A failure says
// in words which list, through which base URL, missed which update
// answered how long before (or showed a write never made, or mixed two
// instants, or which update answered another write), and
// Config.ConsistencyHTML receives porcupine's picture of the history. For
// programs, each such Failure also has a Kind (KindMissedUpdate, …: a
// stable string, "kind" in the JSON report), a Count and the Operations
// of the history involved, so that they compare kinds, not words. A
// check that runs out of time is skipped as not judged, never passed.
// Config.ConsistencyStaleness judges the run against a bounded-staleness
// promise instead (each list's call moved that much earlier), and every
// run reports its observed staleness: the smallest bound, to the
// millisecond, with which its history passes.
// Config.ConsistencyHistory saves the history (JSON), and
// ReplayConsistency judges a saved one again without the deployment, with
// the same verdict and words.
//
// # Not judged through an intermediary
//
// A request that a standard intermediary refuses before the API can see
// it (nginx answers a method name in lower case with its own 400, whatever
// its settings) cannot be judged through it: a check whose only faults are
// such refusals is skipped as not judged, naming the intermediary. A proxy
// that changes an answer the API gave still fails the check.
//
// # What to read first
//
// Report.Headlines, shown before the results in every output, says when
// one cause explains many results: the key was refused (and which checks
// failed or were skipped because of it), or answers came from something
// in front of the API (a router's or proxy's own page, named with its
// evidence), not from the API.
package conformancetest
