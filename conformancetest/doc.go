// Package conformancetest checks, over HTTP only, that a deployment of the
// Pet Store inventory API behaves as the specification (docs/SPEC.md in
// the petinventory repository) and the petinventory contract
// (docs/CONTRACT.md) require. It imports nothing from
// the petinventory repository and nothing outside the standard library, so
// it can judge any implementation, in any language, by its URL.
//
// Every rule is a named check ("auth/missing-header", "body/trailing-data",
// "concurrency/parallel-updates", …) that cites its source ("spec §4.2 rule
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
// read; afterwards every quantity the check changed is put back, also when
// the check failed midway or the run's context was cancelled (Ctrl-C in
// the command). A change the check did not intend is reported as a failure
// and undone, unless another client made it meanwhile (to a value the check
// never sent). No check depends on another having run. Config.ReadOnly
// skips every check whose requests would change a conforming server.
//
// # OpenAPI
//
// The rules of the project's OpenAPI document (inventory/openapi.yaml) are
// embedded here, unexported, because the package may not import the
// repository: testdata/openapi-rules.json holds what kin-openapi reads in
// the document (a test in the repository's internal/e2e module derives
// and compares it), and this package's tests prove that the embedded
// rules agree with that file.
//
// # What to read first
//
// Report.Headlines, shown before the results in every output, says when
// one cause explains many results: the key was refused (and which checks
// failed or were skipped because of it), or answers came from something
// in front of the API (a router's or proxy's own page, named with its
// evidence), not from the API.
package conformancetest
