package consistency

import (
	"context"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// TestFaultAtZeroStampedFirst: a fault at offset 0 is stamped applied
// before the schedule's start returns, so before the run's first request
// is sent (its call is taken after start): a failure of the run follows
// it, however late the fault's goroutine runs. The faults come back
// ordered by when they were applied.
func TestFaultAtZeroStampedFirst(t *testing.T) {
	for range 20 {
		s := &schedule{scrub: func(x string) string { return x }, faults: []suite.Fault{
			{Offset: 30 * time.Millisecond, Kind: FaultExec, Args: []string{"true"}},
			{Offset: 0, Kind: FaultExec, Args: []string{"true"}},
		}}
		start := time.Now()
		s.start(context.Background(), start, func() {})
		firstCall := int64(time.Since(start)) // a request sent now
		done, err := s.wait()
		if err != nil || len(done) != 2 {
			t.Fatalf("%v, %d applied", err, len(done))
		}
		if done[0].OffsetNs != 0 || done[0].AppliedNs > firstCall || done[1].AppliedNs < done[0].AppliedNs {
			t.Fatalf("applied %+v: want the fault at 0 first, at or before %d", done, firstCall)
		}
	}
}
