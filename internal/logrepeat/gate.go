package logrepeat

import (
	"sync"
	"time"
)

// DefaultInterval is how long a repeated line stays quiet when
// Gate.Interval is zero.
const DefaultInterval = time.Minute

// DefaultMax is how many distinct lines a Gate remembers when Gate.Max is
// zero. Lines differ by address (each sentinel, each Cluster node), so a
// few are kept; past the bound the lines whose quiet time is over are
// forgotten first, then the oldest, so that a flood of distinct lines
// never grows memory and stays throttled.
const DefaultMax = 64

// Gate decides which occurrences of a repeated line are logged at their
// own level. The zero value is ready to use, with DefaultInterval and
// DefaultMax. A Gate is safe for concurrent use.
type Gate struct {
	Interval time.Duration // quiet time after a line is logged; DefaultInterval when zero
	Max      int           // distinct lines remembered; DefaultMax when zero

	mu    sync.Mutex
	lines map[string]*line
}

type line struct {
	at   time.Time // when it was last logged at its level
	held int       // occurrences held back since
}

// Allow reports whether the occurrence of key at now is to be logged at
// its own level: the first one, and the first after Interval has passed
// since the last one logged. When it is, held is how many occurrences were
// held back in between (0 for the first); a caller logs the others at a
// quieter level, or not at all.
func (g *Gate) Allow(key string, now time.Time) (ok bool, held int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	interval := g.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	if l, seen := g.lines[key]; seen {
		if now.Sub(l.at) < interval {
			l.held++
			return false, 0
		}
		held = l.held
		l.at, l.held = now, 0
		return true, held
	}
	g.forgetIfFull(now, interval)
	if g.lines == nil {
		g.lines = make(map[string]*line)
	}
	g.lines[key] = &line{at: now}
	return true, 0
}

// forgetIfFull makes room for one more line, in one pass over the lines:
// it drops the lines whose quiet time is over, and if all are recent,
// forgets the oldest (the one logged longest ago), so that a flood of more
// than Max distinct lines stays throttled but for the lines it pushes out,
// instead of starting every line anew. (A Max lowered on a Gate in use is
// reached as lines expire: each new line then replaces one.)
func (g *Gate) forgetIfFull(now time.Time, interval time.Duration) {
	max := g.Max
	if max <= 0 {
		max = DefaultMax
	}
	if len(g.lines) < max {
		return
	}
	var oldest *line
	oldestKey := ""
	for k, l := range g.lines {
		switch {
		case now.Sub(l.at) >= interval:
			delete(g.lines, k)
		case oldest == nil || l.at.Before(oldest.at):
			oldest, oldestKey = l, k
		}
	}
	if len(g.lines) >= max {
		delete(g.lines, oldestKey)
	}
}
