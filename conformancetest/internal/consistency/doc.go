// Package consistency is the suite's consistency check,
// consistency/linearizable (Check), with all that is its own: the run
// (clients that list and update at once over every base URL of the
// deployment, each request recorded with its call and return on one
// clock, a barrier list alone every consistencyRound), the fault schedule
// applied on the run's clock (Fault kinds, ParseFault, CheckSchedule, and
// the schedule that applies them with package internal/faults), what
// each fault cost and which fault a failure followed, the check's result,
// and the history saved to a file and judged again without the
// deployment (Replay).
//
// The judgement of a history is package internal/linearize's; this
// package records one, asks for the verdict and says it in the report.
package consistency
