// Package linearize judges the history of a consistency run: the requests
// that clients sent to the replicas of an inventory API, each with its call
// and return, and what each list showed and each update answered. It holds
// the model of the inventory, the verdict, and the words that say what
// broke the promise (docs/CONTRACT.md §Consistency); it sends nothing, so a
// saved history can be judged again without the deployment.
//
// The history of the consistency run is checked in two ways that agree:
//
//   - porcupine, the linearizability checker etcd's robustness tests use,
//     decides whether one order of every request exists, each at an
//     instant between its call and its return, that a single copy of the
//     inventory could have produced. It gives the verdict and the picture.
//   - Direct rules, each sufficient for a violation, name what happened
//     in words: a list older than an update answered before it was sent,
//     a value never written, a list of two instants, an update that
//     answered another write.
//
// The model keeps lists whole: its state is the quantities of the few
// pets in play, a list is one read of all of them, an update one write.
// Every write uses a quantity of its own, so a value read names the write
// that made it. An update with an unknown outcome (no answer, cut off,
// 503) may have taken effect at any instant after its call, as etcd
// models it; before checking, its return is moved to that of the first
// list that showed its value (it took effect before that list answered),
// and one that no list showed is left out (taking effect at the very
// end, after every read, is always possible, so it constrains nothing).
// Both steps keep the verdict and shrink the search.
//
// Against a staleness bound D (Options.Staleness), every list's call is
// moved D earlier before the check (Golab, Li and Shah's Δ-atomicity).
// Such lists overlap many updates, which porcupine's search does not bear,
// so the verdict is then the sweep's (sweep.go), which on strict histories
// agrees with porcupine. Every judgement also finds the observed
// staleness: the smallest bound, to the millisecond, with which the
// history passes.
//
// Lists marked stale (Op.Stale: a deployment that answers lists from the
// last state its store confirmed during an outage, with their Age) are
// judged apart, against a stale-if-error bound (Options.StaleIfError):
// such a list may show one state the inventory held at most the lesser
// of that bound and its Age plus one second before it was sent. They can
// be seconds old, so they do not go through porcupine's pieces; direct
// rules judge them over the history porcupine checks (stale.go argues
// why these rules never fail a deployment that keeps the promise).
// Without a bound, a list marked stale fails with UnexpectedStale.
//
// The verdict is data: each failure has a kind (MissedUpdate,
// WriteTakenBack, …, whose strings the JSON report carries), the
// requests involved, by their index in the history and their role, and
// the fault of the run's schedule it followed (Failure.Fault). Words is
// the one function that says a failure in sentences, so that programs
// and tests read kinds and counts and the words can change. Judge writes
// nothing: Verdict.Draw draws porcupine's picture where the caller asks.
//
// Each request carries its HTTP status and whether it was refused, as
// the client read them, so that nothing is read back from words: the
// fault figures (FaultResults: what each fault cost, from the history
// alone, the same in a run and in a replay) count answers by status.
// The verdict's Counts say how dense the history was: requests, lists
// and updates answered 200, and updates that overlapped another client's
// request; a history with fewer updates answered 200 than
// Options.MinUpdates fails with ThinHistory, since a verdict on a thin
// history says little.
//
// After the faults of a history, Recover finds when the deployment was
// whole again: a strict list (Op.Strict, sent with Cache-Control:
// no-cache) and an update answered 200, both sent after the last fault
// ended; a history that shows none within Options.Recovery fails with
// NotRecovered. The run's barrier lists and its recovery probes are such
// lists, and part of the history, so a replay measures the same recovery.
//
// A history is saved and read back as JSON (WriteHistory, ReadHistory,
// in the format Format; files of the format before it still read and
// judge to the same verdict), so that it can be judged again without the
// deployment.
package linearize
