package conformancetest

import (
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/consistency"
)

// The consistency check's history can be saved (Config.ConsistencyHistory)
// and judged again later without the deployment (ReplayConsistency): a
// failure seen in CI can be examined again, and a change of the checker
// tried on real histories.

// ReplayConfig says which saved history ReplayConsistency judges, and how.
type ReplayConfig struct {
	// History is the file a consistency run saved its history to
	// (Config.ConsistencyHistory, -consistency-history).
	History string
	// ConsistencyHTML, when not empty, receives the picture of the
	// history when it fails, as Config.ConsistencyHTML does.
	ConsistencyHTML string
	// ConsistencyStaleness, when JudgeStaleness is set, is the staleness
	// bound to judge against (zero: strict); otherwise the history is
	// judged against the bound its run was judged against.
	ConsistencyStaleness time.Duration
	JudgeStaleness       bool
}

// ErrNotAHistory is returned (wrapped, with the cause) by
// ReplayConsistency when the file is not a history the consistency check
// saved. Compare with errors.Is.
var ErrNotAHistory = consistency.ErrNotAHistory

// ReplayConsistency judges a saved consistency history again, without the
// deployment: it sends nothing. The Report holds one result,
// consistency/linearizable, with the verdict and the words the run that
// saved the history would give with this version of the suite; a note
// says whether that run concluded the same.
func ReplayConsistency(cfg ReplayConfig) (*Report, error) {
	rep, err := consistency.Replay(consistency.ReplayConfig(cfg))
	return (*Report)(rep), err
}
