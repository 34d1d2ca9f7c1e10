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
// The verdict is data: each failure has a kind (MissedUpdate,
// WriteTakenBack, …, whose strings the JSON report carries) and the
// requests involved, by their index in the history and their role. Words
// is the one function that says a failure in sentences, so that programs
// and tests read kinds and counts and the words can change. Judge writes
// nothing: Verdict.Draw draws porcupine's picture where the caller asks.
//
// A history is saved and read back as JSON (WriteHistory, ReadHistory),
// so that it can be judged again without the deployment.
package linearize
