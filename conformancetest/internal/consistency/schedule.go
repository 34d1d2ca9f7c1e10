package consistency

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/faults"
	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// The consistency run's fault schedule: faults applied at offsets of the
// run, on the run's clock, so that the checker judges what they did and
// the report says what each cost. Package internal/faults applies them.

// schedule applies the faults of one consistency run.
type schedule struct {
	faults []suite.Fault
	target *faults.Target // nil when no fault acts on Redis
	prefix string
	scrub  func(string) string
	wg     sync.WaitGroup
	mu     sync.Mutex
	done   []linearize.Fault
	err    error
}

// newSchedule prepares the run's faults and checks that the Redis they
// act on answers and lets its user send what they need (see
// faults.Target.Check): an error names the first fault that needs it.
// It is called before any check runs (Prepare), and again when the
// consistency run starts.
func newSchedule(ctx context.Context, cfg suite.Settings, scrub func(string) string) (*schedule, error) {
	s := &schedule{faults: cfg.ConsistencyFaults, prefix: cfg.ConsistencyRedisPrefix}
	s.scrub = scrub
	var first *suite.Fault
	var need faults.Needs
	for i, f := range s.faults {
		if isRedis(f) && first == nil {
			first = &s.faults[i]
		}
		need.Pause = need.Pause || f.Kind == FaultRedisPause
		need.KillClients = need.KillClients || f.Kind == FaultRedisKillClients
		need.Failover = need.Failover || f.Kind == FaultRedisFailover
	}
	if first == nil {
		return s, nil
	}
	t, err := faults.ParseURL(cfg.ConsistencyRedis, cfg.ConsistencyRedisCAFile)
	if err == nil {
		err = t.Check(ctx, need, s.prefix)
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

// Prepare checks, right after the deployment was probed and before any
// check runs, the Redis the faults of the schedule act on (see
// newSchedule), so that a wrong password or a missing right stops the
// run within seconds rather than after every other check: ErrFault. It
// checks nothing when the consistency run will not run (no duration, a
// read-only run) or has no redis-* fault.
func Prepare(ctx context.Context, cfg suite.Settings, scrub func(string) string) error {
	if cfg.Consistency == 0 || cfg.ReadOnly || len(cfg.ConsistencyFaults) == 0 {
		return nil
	}
	_, err := newSchedule(ctx, cfg, scrub)
	return err
}

func redisName(t *faults.Target) string {
	if t == nil {
		return "-consistency-redis"
	}
	return t.String()
}

// failure is the error of a fault that could not be applied.
func (s *schedule) failure(f suite.Fault, err error) error {
	return fmt.Errorf("conformancetest: %w: %s", ErrFault, s.scrub(fmt.Sprintf("fault %q: %v", f.String(), err)))
}

// start applies each fault at its offset from start, until ctx ends;
// stop is called when one cannot be applied. A fault at offset 0 is
// stamped applied before start returns, so before any client of the run
// sends: it precedes every request of the history, however late its
// goroutine runs.
func (s *schedule) start(ctx context.Context, start time.Time, stop func()) {
	for _, f := range s.faults {
		var now *linearize.Fault
		if f.Offset <= 0 {
			rec := s.stamp(f, start)
			now = &rec
		}
		s.wg.Go(func() {
			var rec linearize.Fault
			if now != nil {
				rec = *now
			} else {
				select {
				case <-time.After(time.Until(start.Add(f.Offset))):
				case <-ctx.Done():
					return
				}
				rec = s.stamp(f, start)
			}
			err := s.apply(ctx, f, start, &rec)
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
	slices.SortFunc(s.done, func(a, b linearize.Fault) int { return cmp.Compare(a.AppliedNs, b.AppliedNs) })
	return s.done, s.err
}

// stamp is the record of fault f applied now, start the run's start.
func (s *schedule) stamp(f suite.Fault, start time.Time) linearize.Fault {
	return linearize.Fault{Fault: s.scrub(f.String()), Kind: f.Kind, OffsetNs: int64(f.Offset), AppliedNs: int64(time.Since(start))}
}

// apply applies fault f, stamped rec, and records in rec what it did.
func (s *schedule) apply(ctx context.Context, f suite.Fault, start time.Time, rec *linearize.Fault) error {
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
	return err
}
