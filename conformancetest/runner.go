package conformancetest

import (
	"context"
	"slices"

	"github.com/petinventory/petinventory/conformancetest/internal/checks"
	"github.com/petinventory/petinventory/conformancetest/internal/consistency"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// ErrUnreachable is returned (wrapped, with the cause) by RunChecks when
// no answer at all came from the target: refused connection, unknown
// host, TLS failure, time-out. Compare with errors.Is.
var ErrUnreachable = suite.ErrUnreachable

// ErrNoChecks is returned by RunChecks when Config.Run matches no check
// at the configured level.
var ErrNoChecks = suite.ErrNoChecks

// registry is every check, in run order, area by area; each area's table
// is in package internal/checks (internal/consistency for the last),
// where each row names the function that judges its check. The order is
// for readable output only: no check depends on another having run.
func registry() []*suite.Check {
	return slices.Concat(
		checks.List,
		checks.Cache,
		checks.Routes,
		checks.Auth,
		checks.Order,
		checks.PetID,
		checks.Media,
		checks.Size,
		checks.Body,
		checks.Update,
		checks.Response,
		checks.Concurrency,
		checks.Head,
		checks.Timeout,
		checks.Malformed,
		consistency.Checks,
	)
}

// CheckInfo describes a check, for listing.
type CheckInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Rule   string `json:"rule"`
	// Spec is set for checks that run at LevelSpec too.
	Spec bool `json:"spec"`
	// Writes is set for checks that -read-only skips.
	Writes bool `json:"writes"`
}

// Checks lists the checks that run at the given level, in run order.
func Checks(level Level) []CheckInfo {
	var out []CheckInfo
	for _, ch := range registry() {
		if level == LevelSpec && !ch.Spec {
			continue
		}
		out = append(out, CheckInfo{Name: ch.Name, Source: ch.Source, Rule: ch.Rule, Spec: ch.Spec, Writes: ch.Writes})
	}
	return out
}

// newRunner returns the runner of a run with cfg, or what is wrong with
// cfg.
func newRunner(cfg Config) (*suite.Runner, error) {
	c, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	return suite.NewRunner(c.settings(), registry()), nil
}

// RunChecks runs the selected checks against cfg.BaseURL, one after the
// other, and returns their results. It returns an error only when the
// configuration is invalid, when Config.Run selects nothing (ErrNoChecks),
// when the target cannot be reached at all (ErrUnreachable) or when a
// fault of the consistency run's schedule could not be applied
// (ErrFault); failing checks are results, not errors.
//
// When ctx ends mid-run (Ctrl-C in the command), the running check stops,
// the quantities it changed are restored, the checks left are skipped and
// Report.Interrupted is set.
func RunChecks(ctx context.Context, cfg Config) (*Report, error) {
	rn, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	rep, err := rn.Run(ctx)
	if err != nil {
		return nil, err
	}
	return (*Report)(rep), nil
}
