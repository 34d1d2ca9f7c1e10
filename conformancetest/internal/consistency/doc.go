// Package consistency is the suite's consistency check,
// consistency/linearizable (Check), with all that is its own: the run
// (clients that list and update at once over every base URL of the
// deployment, each request recorded with its call and return on one
// clock, in rounds whose length follows the latency met, each ended by
// a strict barrier list sent alone: rounds.go), the fault schedule
// applied on the run's clock (Fault kinds, ParseFault, CheckSchedule,
// the schedule that applies them with package internal/faults, and
// Prepare, which checks the fault Redis before any check runs), the wait
// for the deployment to recover after the last fault (recovery.go), the
// check's result (the figures of the history and of each fault are
// internal/linearize's), and the history saved to a file and judged
// again without the deployment (Replay).
//
// The judgement of a history is package internal/linearize's; this
// package records one, asks for the verdict and says it in the report.
package consistency
