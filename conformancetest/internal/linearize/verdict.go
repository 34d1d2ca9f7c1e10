package linearize

import (
	"errors"
	"io"
	"time"
)

// Verdict is the judgement of a history, as data: each failure a kind and
// the requests involved, worded by Words.
type Verdict struct {
	// Failures are what broke the promise; none when the history passed
	// (or was not judged).
	Failures []Failure
	// NotJudged says why there is no verdict (the checker ran out of
	// time), "" when there is one.
	NotJudged string
	// Detail says what was judged and what it cost.
	Detail string
	// Counts are the requests the history held, by what became of them.
	Counts Counts
	// Observed is the observed staleness: the smallest bound, to the
	// millisecond, for which the history passes (0 for a history that
	// passes strictly); nil when no bound makes it pass or none was
	// found in time. ObservedWords says it in words, and why when nil.
	// It is the staleness of the lists not marked stale: those are
	// judged against their own bound (Options.StaleIfError).
	Observed      *time.Duration
	ObservedWords string
	// Recovery is how the deployment recovered from the history's
	// faults (Recover); RecoveryWords says it ("recovered 2.4 s after
	// the last fault ended", or why not), "" without faults.
	Recovery      Recovery
	RecoveryWords string

	// drawing is what Draw draws; nil for a verdict read back from a
	// file.
	drawing *drawing
}

// Counts are the requests of a judged history: what it holds, and so how
// much its verdict says (its density).
type Counts struct {
	Operations  int // every request of the history, failed ones included
	Lists       int // lists answered 200 (with a list), stale ones included
	StaleLists  int // of those, the ones marked stale (Op.Stale)
	FailedLists int // lists that failed, dropped from the history
	Updates     int // every update
	// UpdatesOK are the updates answered 200 with their item (Op.Known):
	// the writes the verdict rests on. Options.MinUpdates bounds them
	// from below.
	UpdatesOK int
	// Overlapped counts the updates answered 200 whose interval, from
	// call to return as the client saw it (both ends included),
	// intersects the interval of at least one request of another client
	// (a list or an update, answered or not). Such an update was in
	// flight while another client's request was: the concurrency that
	// lets a history show a lost or reordered write. Requests of one
	// client never overlap each other (one in flight at a time).
	Overlapped int
	Unknown    int // updates of unknown outcome (refusals included)
	Refused    int // of those, the ones answered 4xx (Op.Refused)
	LeftOut    int // of those of unknown outcome, the ones no list showed, left out
}

// FailureKind names what broke the promise. Its string is stable: the
// JSON report and the saved history carry it, and programs compare it.
type FailureKind string

// The kinds of failure.
const (
	// NoLists: no list through a base URL was answered 200, so its
	// requests tell nothing.
	NoLists FailureKind = "no-lists"
	// MissedUpdate: judged strictly, a list missed an update answered
	// before the list was sent.
	MissedUpdate FailureKind = "missed-update"
	// OlderThanBound: judged against a staleness bound, a list missed an
	// update answered more than the bound before the list was sent.
	OlderThanBound FailureKind = "older-than-bound"
	// WriteTakenBack: a list showed an older value than a list answered
	// before it was sent had shown.
	WriteTakenBack FailureKind = "write-taken-back"
	// MixedInstants: a list showed one pet before an update that had
	// been answered before another pet's shown write was sent.
	MixedInstants FailureKind = "mixed-instants"
	// FutureWrite: a list showed a write sent after the list was
	// answered.
	FutureWrite FailureKind = "future-write"
	// NeverWritten: a list showed a value no update of the run wrote.
	NeverWritten FailureKind = "never-written"
	// MissingPet: a list lacked a pet the run only updated.
	MissingPet FailureKind = "missing-pet"
	// AnotherWrite: an update's answer carried another write than its
	// own (another client's body, say).
	AnotherWrite FailureKind = "another-write"
	// Unorderable: no order of a set of requests could have been
	// produced by one copy of the inventory, though no single request
	// breaks a rule on its own.
	Unorderable FailureKind = "unorderable"
	// CheckerBug: porcupine accepted a history that the direct rules
	// reject: a bug of the checker.
	CheckerBug FailureKind = "checker-bug"
	// ThinHistory: the history holds fewer updates answered 200 than
	// Options.MinUpdates: too few writes for its verdict to say much,
	// so it is not a pass.
	ThinHistory FailureKind = "thin-history"
	// UnexpectedStale: a list was marked stale (Op.Stale) although the
	// run was not told that the deployment may answer lists from a
	// stale state (Options.StaleIfError zero).
	UnexpectedStale FailureKind = "unexpected-stale"
	// StaleBeyondBound: a list marked stale showed a state older than
	// its bound: Options.StaleIfError, or its Age plus one second when
	// that is less.
	StaleBeyondBound FailureKind = "stale-beyond-bound"
	// NotRecovered: after the last fault of the schedule ended, the
	// deployment did not answer a strict list and an update with 200
	// within Options.Recovery (see Recover).
	NotRecovered FailureKind = "not-recovered"
)

// Role is what a request involved in a failure did there.
type Role string

// The roles.
const (
	// RoleList is the list that broke the rule.
	RoleList Role = "list"
	// RoleUpdate is the update whose answer carried another write.
	RoleUpdate Role = "update"
	// RoleWrittenBy is the update that wrote the value shown (or, for
	// AnotherWrite, the value the answer carried); absent for the
	// quantity before the run.
	RoleWrittenBy Role = "written-by"
	// RoleMissed is the update the list missed.
	RoleMissed Role = "missed"
	// RoleNewest is, for MixedInstants, the write of the newest value
	// the list showed.
	RoleNewest Role = "newest"
	// RoleShownBy is, for WriteTakenBack, the earlier list that had
	// shown the write taken back.
	RoleShownBy Role = "shown-by"
	// RoleTakenBack is the write taken back.
	RoleTakenBack Role = "taken-back"
	// RoleStuck is, for Unorderable against a bound, the request whose
	// end no order survived.
	RoleStuck Role = "stuck"
	// RoleMember is one of the smallest set of requests found that
	// cannot be ordered.
	RoleMember Role = "member"
	// RoleFailedList is, for NoLists, the first list through the base
	// URL, which failed.
	RoleFailedList Role = "failed-list"
)

// Involved is a request involved in a failure: its index in History.Ops
// and what it did there.
type Involved struct {
	Index int
	Role  Role
}

// Failure is one thing that broke the promise, as data; Problem and
// Expected are its words (Words).
type Failure struct {
	Kind FailureKind
	// Ops are the requests involved: for a counted kind, the first
	// case's.
	Ops []Involved
	// Pet is the pet it is about, an index in History.Pets; -1 for none
	// or several.
	Pet int
	// Count is how many requests broke the rule (1 for a kind that is
	// not counted).
	Count int
	// Base is, for NoLists, the base URL (an index in History.Bases);
	// -1 otherwise.
	Base int
	// ByBase counts, for MissedUpdate and OlderThanBound, the stale
	// lists through each base URL.
	ByBase []int
	// Bound is the staleness bound the history was judged against
	// (Options.Staleness); for a failure of a list marked stale, that
	// list's own bound (see StaleIfError).
	Bound time.Duration
	// Pieces, OfPieces and Span are, for Unorderable without a stuck
	// request, how many pieces of the history porcupine found no order
	// of, out of how many, and the first one's first and last return.
	Pieces, OfPieces int
	Span             [2]int64
	// From is, for Unorderable, the state the smallest set of requests
	// found starts from (a quantity per pet); nil when none was found in
	// time.
	From []int64
	// Updates and MinUpdates are, for ThinHistory, the updates answered
	// 200 that the history holds and the minimum it was judged against.
	Updates, MinUpdates int
	// StaleIfError is, for a failure of a list marked stale, the
	// stale-if-error bound the history was judged against
	// (Options.StaleIfError); Bound is then the list's own bound, the
	// lesser of it and the list's Age plus one second.
	StaleIfError time.Duration
	// Recovery is, for NotRecovered, the limit judged against
	// (Options.Recovery).
	Recovery time.Duration
	// Fault is the fault the failure followed, an index in
	// History.Faults: the last one applied (Fault.AppliedNs) at or
	// before the latest call among the requests in Ops, the one that
	// saw the harm. -1 when the history has no fault, the failure names
	// no request, or its requests were all sent before the first fault.
	Fault int

	Problem  string
	Expected string
}

// Op returns the index of the request with role r, and whether one is.
func (f *Failure) Op(r Role) (int, bool) {
	for _, x := range f.Ops {
		if x.Role == r {
			return x.Index, true
		}
	}
	return -1, false
}

// Outcome is the verdict in one word: "fail" when something broke the
// promise, "not judged" when the checker ran out of time, else "pass".
func (v *Verdict) Outcome() string {
	switch {
	case len(v.Failures) > 0:
		return "fail"
	case v.NotJudged != "":
		return "not judged"
	}
	return "pass"
}

// ErrNoPicture is Draw's error for a verdict that has no picture: one
// read back from a file, or of a history that passed.
var ErrNoPicture = errors.New("linearize: the verdict has no picture")

// Draw writes porcupine's picture of the failed history to w: the pieces
// found not linearizable (or every piece when a direct rule found what
// porcupine had no time to), the violations marked. Judge writes no file:
// its caller draws where it is asked to.
func (v *Verdict) Draw(w io.Writer) error {
	if v.drawing == nil || len(v.Failures) == 0 {
		return ErrNoPicture
	}
	return v.drawing.draw(w, v.Failures)
}
