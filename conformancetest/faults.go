package conformancetest

import (
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/consistency"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// The consistency run's fault schedule: faults applied at offsets of the
// run, on the run's clock, so that the checker judges what they did and
// the report says what each cost. Package internal/consistency applies
// them, with package internal/faults.

// The kinds of fault (Fault.Kind).
const (
	// FaultExec ("exec") runs a command with sh -c (Fault.Args[0]),
	// stopped after FaultExecLimit; it must exit 0.
	FaultExec = consistency.FaultExec
	// FaultRedisPause ("redis-pause") pauses every client of the master
	// (of every master of a Cluster) for a duration (Fault.Args[0]):
	// CLIENT PAUSE ms ALL.
	FaultRedisPause = consistency.FaultRedisPause
	// FaultRedisKillClients ("redis-kill-clients") closes every normal
	// client connection of every master (CLIENT KILL TYPE normal SKIPME
	// yes).
	FaultRedisKillClients = consistency.FaultRedisKillClients
	// FaultRedisFailover ("redis-failover") makes a replica the master:
	// SENTINEL FAILOVER with Sentinel, CLUSTER FAILOVER on a replica of
	// the master that owns the store's keys in a Cluster. It ends when the
	// new master is announced.
	FaultRedisFailover = consistency.FaultRedisFailover
)

// FaultExecLimit bounds an exec fault's command (a minute).
const FaultExecLimit = consistency.FaultExecLimit

// DefaultConsistencyRedisPrefix is the key prefix whose slot a Cluster
// failover acts on when Config.ConsistencyRedisPrefix is empty: the
// store's default.
const DefaultConsistencyRedisPrefix = "inventory"

// ErrFault is returned (wrapped, naming the fault and why) by RunChecks
// when a fault of the schedule could not be applied: Redis refused the
// password or the command or could not be reached, a command exited
// other than 0. A broken harness is not a contract failure: the run
// stops, and nothing is judged.
var ErrFault = consistency.ErrFault

// Fault is one fault of the consistency run's schedule
// (Config.ConsistencyFaults): Kind applied Offset after the run started.
// ParseFault reads the command line's form, "OFFSET KIND [ARG...]".
type Fault struct {
	Offset time.Duration
	Kind   string
	// Args: for FaultExec, the command (one string, as sh -c reads it);
	// for FaultRedisPause, the duration ("2s"); none for the others.
	Args []string
}

// String is the fault in the command line's form: "6s redis-pause 2s".
func (f Fault) String() string { return suite.Fault(f).String() }

// ParseFault reads a fault in the form of -consistency-fault: "OFFSET
// KIND [ARG...]", OFFSET a Go duration from the start of the run:
// "6s exec kubectl -n shop delete pod redis-0", "4s redis-pause 2s",
// "3s redis-kill-clients", "6s redis-failover". The rest of an exec
// fault, after "exec", is its command as it is written.
func ParseFault(s string) (Fault, error) {
	f, err := consistency.ParseFault(s)
	return Fault(f), err
}
