package consistency

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
)

// The run's rounds. The clients send for a round, then wait until every
// request in flight is answered, and one list is sent alone: the
// barrier. Its answer is the state at that instant, so the history is
// checked piece by piece (internal/linearize): the checker's cost grows
// with the square of the length of what it checks at once.
//
// A round's time starts when the previous barrier has returned, so that
// a slow barrier (a WAIT for replicas, a distant deployment) never eats
// the clients' time, and its length follows the latency the clients met
// in the round before: long enough for them to send about roundOps
// requests between them, within minRound and maxRound. On the loopback
// that is minRound, as rounds always were; at 80 ms a request, a second,
// so that a run holds about clients ÷ latency requests a second, and a
// piece about as many as a loopback piece: the checker's cost stays
// bounded.

const (
	// minRound is the shortest round: on the loopback the clients send
	// dozens of requests each in it.
	minRound = 100 * time.Millisecond
	// maxRound is the longest round: a barrier pins the state (and a
	// recovery is seen) at least this often.
	maxRound = time.Second
	// roundOps is how many requests the clients of a round send between
	// them, about as many as a piece of a run on the loopback holds
	// (8 clients, 100 ms).
	roundOps = 192
)

// roundLength is the length of a round after one whose requests took
// latency (the median of their durations) with clients clients: long
// enough for roundOps requests, within minRound and maxRound.
func roundLength(clients int, latency time.Duration) time.Duration {
	d := time.Duration(int64(latency) * roundOps / int64(max(clients, 1)))
	return min(max(d, minRound), maxRound)
}

// median is the median duration of ops, 0 for none.
func median(ops []linearize.Op) time.Duration {
	if len(ops) == 0 {
		return 0
	}
	d := make([]int64, len(ops))
	for i, o := range ops {
		d[i] = o.Return - o.Call
	}
	slices.Sort(d)
	return time.Duration(d[len(d)/2])
}

// record runs the clients until the run's duration has passed and
// returns every request they sent, ordered by call: rounds of clients,
// each ended by a barrier list (see roundLength).
func (r *consistencyRun) record(clients int, started func(time.Time)) []linearize.Op {
	r.start = time.Now()
	started(r.start)
	rngs := make([]*rand.Rand, clients)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), uint64(r.start.UnixNano())))
	}
	var all []linearize.Op
	length := minRound
	for round := 0; time.Since(r.start) < r.until && r.ctx.Err() == nil; round++ {
		r.longest = max(r.longest, length)
		end := min(time.Since(r.start)+length, r.until)
		ops := r.clientsRound(round, end, rngs)
		if len(ops) > 0 {
			length = roundLength(clients, median(ops))
		}
		all = append(all, ops...)
		// Judged against a staleness bound, a list may take effect that
		// long before it was sent: the barrier pins the state the round
		// left only when it comes that long after every other request of
		// the round (see linearize's pieces).
		if q := r.cfg.ConsistencyStaleness; q > 0 {
			select {
			case <-time.After(q):
			case <-r.ctx.Done():
			}
		}
		// The barrier, through each base URL in turn; in the picture it
		// is the client numbered after the others. It is strict
		// (Cache-Control: no-cache): a deployment answers it from its
		// store, never from a held or stale state, so that it pins the
		// state there (or fails, and pins nothing).
		b := linearize.Op{Client: clients, Base: round % len(r.bases), Round: round, Barrier: true, Strict: true}
		r.list(&b)
		all = append(all, b)
	}
	slices.SortFunc(all, func(a, b linearize.Op) int { return cmp.Compare(a.Call, b.Call) })
	return all
}

// clientsRound runs the clients of round round, each with one request
// in flight, until end (an offset of the run), and returns their
// requests once every one is answered.
func (r *consistencyRun) clientsRound(round int, end time.Duration, rngs []*rand.Rand) []linearize.Op {
	var (
		mu  sync.Mutex
		all []linearize.Op
		wg  sync.WaitGroup
	)
	for i := range rngs {
		wg.Go(func() {
			var mine []linearize.Op
			for time.Since(r.start) < end && r.ctx.Err() == nil {
				// Each client keeps to one base URL, so that every
				// replica serves its clients' requests back to back.
				o := linearize.Op{Client: i, Base: i % len(r.bases), Round: round}
				if rngs[i].IntN(2) == 0 {
					r.list(&o)
				} else {
					r.update(&o, rngs[i].IntN(len(r.pets)))
				}
				mine = append(mine, o)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}
