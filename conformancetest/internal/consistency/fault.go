package consistency

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/faults"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// The faults of the consistency run's schedule (Config.ConsistencyFaults,
// -consistency-fault): their kinds, their command line's form, and the
// checks of a schedule before the run. The schedule applies them
// (schedule.go), and the report says what each cost (faults.go).

// The kinds of fault (Fault.Kind), conformancetest's FaultExec, ….
const (
	// FaultExec runs a command with sh -c (Fault.Args[0]), stopped after
	// FaultExecLimit; it must exit 0.
	FaultExec = "exec"
	// FaultRedisPause pauses every client of the master (of every master
	// of a Cluster) for a duration (Fault.Args[0]): CLIENT PAUSE ms ALL.
	FaultRedisPause = "redis-pause"
	// FaultRedisKillClients closes every normal client connection of
	// every master (CLIENT KILL TYPE normal SKIPME yes).
	FaultRedisKillClients = "redis-kill-clients"
	// FaultRedisFailover makes a replica the master: SENTINEL FAILOVER
	// with Sentinel, CLUSTER FAILOVER on a replica of the master that
	// owns the store's keys in a Cluster. It ends when the new master is
	// announced.
	FaultRedisFailover = "redis-failover"
)

// FaultExecLimit bounds an exec fault's command.
const FaultExecLimit = time.Minute

// ErrFault is conformancetest.ErrFault: a fault of the schedule could not
// be applied.
var ErrFault = errors.New("a fault of the schedule could not be applied")

// ParseFault reads a fault in the form of -consistency-fault (see
// conformancetest.ParseFault).
func ParseFault(s string) (suite.Fault, error) {
	s = strings.TrimSpace(s)
	offset, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	kind, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	d, err := time.ParseDuration(offset)
	if err != nil {
		return suite.Fault{}, fmt.Errorf("fault %q: the offset %q is not a duration (e.g. 6s); want \"OFFSET KIND [ARG...]\"", s, offset)
	}
	f := suite.Fault{Offset: d, Kind: kind}
	switch {
	case kind == FaultExec:
		f.Args = []string{args}
	case args != "":
		f.Args = strings.Fields(args)
	}
	return f, Validate(f)
}

// Validate checks one fault on its own.
func Validate(f suite.Fault) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("fault %q: %s", f.String(), fmt.Sprintf(format, args...))
	}
	if f.Offset < 0 {
		return bad("the offset is negative")
	}
	switch f.Kind {
	case FaultExec:
		if len(f.Args) != 1 || strings.TrimSpace(f.Args[0]) == "" {
			return bad("exec needs a command: \"6s exec kubectl delete pod redis-0\"")
		}
	case FaultRedisPause:
		if len(f.Args) != 1 {
			return bad("redis-pause needs one duration: \"4s redis-pause 2s\"")
		}
		if d, err := time.ParseDuration(f.Args[0]); err != nil || d < time.Millisecond {
			return bad("redis-pause's duration %q is not a duration of 1ms or more", f.Args[0])
		}
	case FaultRedisKillClients, FaultRedisFailover:
		if len(f.Args) != 0 {
			return bad("%s takes no argument", f.Kind)
		}
	default:
		return bad("unknown kind %q; the kinds are exec, redis-pause, redis-kill-clients and redis-failover", f.Kind)
	}
	return nil
}

// isRedis reports whether f acts on Redis (a redis-* kind).
func isRedis(f suite.Fault) bool { return strings.HasPrefix(f.Kind, "redis-") }

// CheckSchedule checks the schedule of a configuration: every fault on its
// own, within a run of duration d, and the Redis the redis-* faults act
// on (the URL redisURL, with the CA certificates of caFile).
func CheckSchedule(d time.Duration, schedule []suite.Fault, redisURL, caFile string) error {
	if len(schedule) == 0 {
		return nil
	}
	if d == 0 {
		return errors.New("conformancetest: Config.ConsistencyFaults are applied during the consistency run: give it a duration (Config.Consistency)")
	}
	needsRedis := false
	for _, f := range schedule {
		if err := Validate(f); err != nil {
			return fmt.Errorf("conformancetest: Config.ConsistencyFaults: %v", err)
		}
		if f.Offset >= d {
			return fmt.Errorf("conformancetest: Config.ConsistencyFaults: fault %q: its offset is not within the run of %v", f.String(), d)
		}
		needsRedis = needsRedis || isRedis(f)
	}
	if needsRedis && redisURL == "" {
		return errors.New("conformancetest: Config.ConsistencyFaults: a redis-* fault needs the Redis to act on (Config.ConsistencyRedis; -consistency-redis URL, or better $INVENTORY_CONSISTENCY_REDIS_URL, which keeps its password off the command line)")
	}
	if redisURL != "" {
		if _, err := faults.ParseURL(redisURL, caFile); err != nil {
			return fmt.Errorf("conformancetest: Config.ConsistencyRedis: %v", err)
		}
	}
	return nil
}
