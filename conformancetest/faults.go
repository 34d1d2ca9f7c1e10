package conformancetest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/faults"
	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// The consistency run's fault schedule: faults applied at offsets of the
// run, on the run's clock, so that the checker judges what they did and
// the report says what each cost. Package internal/faults applies them.

// The kinds of fault (Fault.Kind).
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

// DefaultConsistencyRedisPrefix is the key prefix whose slot a Cluster
// failover acts on when Config.ConsistencyRedisPrefix is empty: the
// store's default.
const DefaultConsistencyRedisPrefix = "inventory"

// ErrFault is returned (wrapped, naming the fault and why) by RunChecks
// when a fault of the schedule could not be applied: Redis refused the
// password or the command or could not be reached, a command exited
// other than 0. A broken harness is not a contract failure: the run
// stops, and nothing is judged.
var ErrFault = errors.New("a fault of the schedule could not be applied")

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
func (f Fault) String() string {
	return strings.Join(append([]string{f.Offset.String(), f.Kind}, f.Args...), " ")
}

// ParseFault reads a fault in the form of -consistency-fault: "OFFSET
// KIND [ARG...]", OFFSET a Go duration from the start of the run:
// "6s exec kubectl -n shop delete pod redis-0", "4s redis-pause 2s",
// "3s redis-kill-clients", "6s redis-failover". The rest of an exec
// fault, after "exec", is its command as it is written.
func ParseFault(s string) (Fault, error) {
	s = strings.TrimSpace(s)
	offset, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	kind, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	d, err := time.ParseDuration(offset)
	if err != nil {
		return Fault{}, fmt.Errorf("fault %q: the offset %q is not a duration (e.g. 6s); want \"OFFSET KIND [ARG...]\"", s, offset)
	}
	f := Fault{Offset: d, Kind: kind}
	switch {
	case kind == FaultExec:
		f.Args = []string{args}
	case args != "":
		f.Args = strings.Fields(args)
	}
	return f, f.validate()
}

// validate checks one fault on its own.
func (f Fault) validate() error {
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

func (f Fault) redis() bool { return strings.HasPrefix(f.Kind, "redis-") }

// checkFaults checks the schedule of a normalized configuration.
func (c *Config) checkFaults() error {
	if c.ConsistencyRedisPrefix == "" {
		c.ConsistencyRedisPrefix = DefaultConsistencyRedisPrefix
	}
	if len(c.ConsistencyFaults) == 0 {
		return nil
	}
	if c.Consistency == 0 {
		return errors.New("conformancetest: Config.ConsistencyFaults are applied during the consistency run: give it a duration (Config.Consistency)")
	}
	needsRedis := false
	for _, f := range c.ConsistencyFaults {
		if err := f.validate(); err != nil {
			return fmt.Errorf("conformancetest: Config.ConsistencyFaults: %v", err)
		}
		if f.Offset >= c.Consistency {
			return fmt.Errorf("conformancetest: Config.ConsistencyFaults: fault %q: its offset is not within the run of %v", f.String(), c.Consistency)
		}
		needsRedis = needsRedis || f.redis()
	}
	if needsRedis && c.ConsistencyRedis == "" {
		return errors.New("conformancetest: Config.ConsistencyFaults: a redis-* fault needs the Redis to act on (Config.ConsistencyRedis, -consistency-redis URL)")
	}
	if c.ConsistencyRedis != "" {
		if _, err := faults.ParseURL(c.ConsistencyRedis, c.ConsistencyRedisCAFile); err != nil {
			return fmt.Errorf("conformancetest: Config.ConsistencyRedis: %v", err)
		}
	}
	return nil
}

// schedule applies the faults of one consistency run.
type schedule struct {
	faults []Fault
	target *faults.Target // nil when no fault acts on Redis
	prefix string
	scrub  func(string) string
	wg     sync.WaitGroup
	mu     sync.Mutex
	done   []linearize.Fault
	err    error
}

// newSchedule prepares the run's faults and checks, before the run, that
// the Redis they act on answers: an error names the first fault that
// needs it.
func newSchedule(ctx context.Context, cfg Config, scrub func(string) string) (*schedule, error) {
	s := &schedule{faults: cfg.ConsistencyFaults, prefix: cfg.ConsistencyRedisPrefix}
	s.scrub = scrub
	var first *Fault
	failover := false
	for i, f := range s.faults {
		if f.redis() && first == nil {
			first = &s.faults[i]
		}
		failover = failover || f.Kind == FaultRedisFailover
	}
	if first == nil {
		return s, nil
	}
	t, err := faults.ParseURL(cfg.ConsistencyRedis, cfg.ConsistencyRedisCAFile)
	if err == nil {
		err = t.Check(ctx, failover, s.prefix)
	}
	if err != nil {
		return nil, s.failure(*first, fmt.Errorf("the Redis to act on (%s) %v", redisName(t), err))
	}
	s.target = t
	secrets := t.Secrets()
	s.scrub = func(x string) string {
		for _, p := range secrets {
			x = strings.ReplaceAll(x, p, "xxxxx")
		}
		return scrub(x)
	}
	return s, nil
}

func redisName(t *faults.Target) string {
	if t == nil {
		return "-consistency-redis"
	}
	return t.String()
}

// failure is the error of a fault that could not be applied.
func (s *schedule) failure(f Fault, err error) error {
	return fmt.Errorf("conformancetest: %w: %s", ErrFault, s.scrub(fmt.Sprintf("fault %q: %v", f.String(), err)))
}

// start applies each fault at its offset from start, until ctx ends;
// stop is called when one cannot be applied.
func (s *schedule) start(ctx context.Context, start time.Time, stop func()) {
	for _, f := range s.faults {
		s.wg.Go(func() {
			select {
			case <-time.After(time.Until(start.Add(f.Offset))):
			case <-ctx.Done():
				return
			}
			rec, err := s.apply(ctx, f, start)
			s.mu.Lock()
			defer s.mu.Unlock()
			if err != nil {
				if s.err == nil && ctx.Err() == nil {
					s.err = s.failure(f, err)
					stop()
				}
				return
			}
			s.done = append(s.done, rec)
		})
	}
}

// wait waits for every fault to end and returns those applied, in the
// order they were, and the error of the first that could not be.
func (s *schedule) wait() ([]linearize.Fault, error) {
	s.wg.Wait()
	slices.SortFunc(s.done, func(a, b linearize.Fault) int { return int(a.AppliedNs - b.AppliedNs) })
	return s.done, s.err
}

// apply applies one fault and records it.
func (s *schedule) apply(ctx context.Context, f Fault, start time.Time) (linearize.Fault, error) {
	rec := linearize.Fault{Fault: s.scrub(f.String()), Kind: f.Kind, OffsetNs: int64(f.Offset), AppliedNs: int64(time.Since(start))}
	ended := func() {
		e := int64(time.Since(start))
		rec.EndedNs = &e
	}
	var err error
	switch f.Kind {
	case FaultExec:
		var status int
		var tail string
		status, tail, err = faults.Exec(ctx, f.Args[0], FaultExecLimit)
		ended()
		rec.ExitStatus, rec.Output = &status, s.scrub(tail)
		if err != nil && tail != "" {
			err = fmt.Errorf("%v; its last lines: %s", err, strings.ReplaceAll(tail, "\n", " | "))
		}
	case FaultRedisPause:
		d, _ := time.ParseDuration(f.Args[0])
		rec.Note, err = s.target.Pause(ctx, d)
		e := rec.AppliedNs + int64(d)
		rec.EndedNs = &e
	case FaultRedisKillClients:
		var closed int64
		rec.Note, closed, err = s.target.KillClients(ctx)
		rec.Closed = &closed
	case FaultRedisFailover:
		rec.Note, err = s.target.Failover(ctx, s.prefix)
		ended()
	}
	rec.Note = s.scrub(rec.Note)
	return rec, err
}

// faultResults says what each fault of h cost: the window around it
// with no update answered 200, the answers other than 200 and the
// updates of unknown outcome sent from it to the next fault.
func faultResults(h *linearize.History) []report.FaultResult {
	if len(h.Faults) == 0 {
		return nil
	}
	end := int64(h.Duration)
	var oks []int64
	for _, o := range h.Ops {
		end = max(end, o.Return)
		if o.Kind == linearize.Update && o.Known {
			oks = append(oks, o.Return)
		}
	}
	slices.Sort(oks)
	edges := append(append([]int64{0}, oks...), end)
	out := make([]report.FaultResult, 0, len(h.Faults))
	for i, f := range h.Faults {
		r := report.FaultResult{Fault: f.Fault, Kind: f.Kind, Offset: time.Duration(f.OffsetNs), AppliedAt: time.Duration(f.AppliedNs),
			Note: f.Note, Closed: f.Closed, ExitStatus: f.ExitStatus, Output: f.Output, Answers: map[string]int{}}
		last := f.AppliedNs
		if f.EndedNs != nil {
			e := time.Duration(*f.EndedNs)
			r.EndedAt, last = &e, *f.EndedNs
		}
		for k := 1; k < len(edges); k++ {
			from, to := edges[k-1], edges[k]
			if from <= last && to >= f.AppliedNs && time.Duration(to-from) > r.Window {
				r.Window, r.WindowFrom, r.WindowTo = time.Duration(to-from), time.Duration(from), time.Duration(to)
			}
		}
		until := int64(1<<63 - 1)
		if i+1 < len(h.Faults) {
			until = h.Faults[i+1].AppliedNs
		}
		for _, o := range h.Ops {
			if o.Call < f.AppliedNs || o.Call >= until {
				continue
			}
			if st := answerStatus(o); st != "200" {
				r.Answers[st]++
			}
			if o.Kind == linearize.Update && !o.Known && !strings.HasSuffix(o.Answer, "(a refusal)") {
				r.Unknown++
			}
		}
		out = append(out, r)
	}
	return out
}

var listStatus = regexp.MustCompile(`answered (\d{3}),`)

// answerStatus is the status of a request's answer as the history holds
// it: "200", "503", …, or "no answer".
func answerStatus(o linearize.Op) string {
	if o.Kind == linearize.List {
		if o.OK {
			return "200"
		}
		if m := listStatus.FindStringSubmatch(o.Answer); m != nil {
			return m[1]
		}
		if strings.HasPrefix(o.Answer, "GET /inventory") {
			return "200" // answered 200 with something that is not a list
		}
		return "no answer"
	}
	if o.Known {
		return "200"
	}
	if len(o.Answer) >= 3 {
		if _, err := strconv.Atoi(o.Answer[:3]); err == nil {
			return o.Answer[:3]
		}
	}
	return "no answer"
}

// attributeFault says which fault of the schedule a failure followed:
// the last applied before the latest of its requests was sent (the one
// that saw the harm, a list after a failover), in its words and in
// AfterFault.
func attributeFault(f *Failure, faults []linearize.Fault) {
	if len(faults) == 0 || len(f.Operations) == 0 {
		return
	}
	var latest int64
	for _, o := range f.Operations {
		latest = max(latest, o.CallNs)
	}
	var last *linearize.Fault
	for i := range faults {
		if faults[i].AppliedNs <= latest {
			last = &faults[i]
		}
	}
	if last == nil {
		f.Problem += " (before any fault of the schedule)"
		return
	}
	f.AfterFault = last.Fault
	f.Problem += fmt.Sprintf(" (after the fault %q, applied at %.3fs)", last.Fault, time.Duration(last.AppliedNs).Seconds())
}
