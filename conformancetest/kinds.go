package conformancetest

import (
	"github.com/petinventory/petinventory/conformancetest/internal/consistency"
	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
)

// The kinds of the consistency check's failures (Failure.Kind, "kind" in
// the JSON report): what broke the promise, in a form that programs
// compare and that does not change when the words do.
const (
	// KindNoLists: no list through a base URL was answered 200, so the
	// deployment cannot be judged through it.
	KindNoLists = string(linearize.NoLists)
	// KindMissedUpdate: judged strictly, a list missed an update
	// answered before the list was sent.
	KindMissedUpdate = string(linearize.MissedUpdate)
	// KindOlderThanBound: judged against a staleness bound, a list
	// missed an update answered more than the bound before it was sent.
	KindOlderThanBound = string(linearize.OlderThanBound)
	// KindWriteTakenBack: a list showed an older value than a list
	// answered before it was sent had shown (a failover that lost a
	// write, say).
	KindWriteTakenBack = string(linearize.WriteTakenBack)
	// KindMixedInstants: a list showed the pets at two instants.
	KindMixedInstants = string(linearize.MixedInstants)
	// KindFutureWrite: a list showed a write sent after it was answered.
	KindFutureWrite = string(linearize.FutureWrite)
	// KindNeverWritten: a list showed a value no update of the run
	// wrote.
	KindNeverWritten = string(linearize.NeverWritten)
	// KindMissingPet: a list lacked a pet the run only updated.
	KindMissingPet = string(linearize.MissingPet)
	// KindAnotherWrite: an update's answer carried another write than
	// its own (another client's body).
	KindAnotherWrite = string(linearize.AnotherWrite)
	// KindUnorderable: a set of requests cannot be ordered, though no
	// single one breaks a rule on its own.
	KindUnorderable = string(linearize.Unorderable)
	// KindCheckerBug: the checker's two ways disagree: a bug of this
	// package.
	KindCheckerBug = string(linearize.CheckerBug)
	// KindThinHistory: the history holds fewer updates answered 200
	// than Config.ConsistencyMinUpdates: too thin for its verdict to
	// say much (run longer, with more clients).
	KindThinHistory = string(linearize.ThinHistory)
	// KindUnexpectedStale: a list was marked stale (Cache-Status:
	// petinventory; fwd=stale) although the run was not given the
	// deployment's stale-if-error bound (Config.ConsistencyStaleIfError).
	KindUnexpectedStale = string(linearize.UnexpectedStale)
	// KindStaleBeyondBound: a list marked stale showed a state older than
	// its bound (Config.ConsistencyStaleIfError, or its Age plus a
	// second).
	KindStaleBeyondBound = string(linearize.StaleBeyondBound)
	// KindNotRecovered: after the last fault of the schedule ended, the
	// deployment did not answer a strict list and an update with 200
	// within Config.ConsistencyRecovery.
	KindNotRecovered = string(linearize.NotRecovered)
	// KindPictureNotWritten: the picture of the history
	// (Config.ConsistencyHTML) could not be written.
	KindPictureNotWritten = consistency.KindPictureNotWritten
	// KindHistoryNotSaved: the history (Config.ConsistencyHistory) could
	// not be saved.
	KindHistoryNotSaved = consistency.KindHistoryNotSaved
)
