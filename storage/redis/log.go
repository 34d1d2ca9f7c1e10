package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// GoRedisLogger writes go-redis's own log lines to an slog.Logger, each
// at the level it deserves: routine events (a sentinel chosen, a new
// master, a sentinel discovered, slots migrated) at Info, failures at
// Warn. A failure go-redis repeats (a dial retried every second while
// Redis is down or refuses the TLS handshake) is warned about once, then
// again only after warnRepeat; the repeats go to Debug. go-redis has one
// logger for the whole process, so install it once, in main:
// redis.SetLogger(redisstore.NewGoRedisLogger(logger)).
type GoRedisLogger struct {
	log *slog.Logger

	mu     sync.Mutex
	warned map[string]time.Time // lines warned about, and when
}

// warnRepeat is how long a failure go-redis repeats stays at Debug.
const warnRepeat = time.Minute

// NewGoRedisLogger returns a GoRedisLogger that writes to l
// (slog.Default() when l is nil).
func NewGoRedisLogger(l *slog.Logger) *GoRedisLogger {
	if l == nil {
		l = slog.Default()
	}
	return &GoRedisLogger{log: l}
}

// Printf logs one line of go-redis, prefixed "go-redis: ".
func (g *GoRedisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	level := goRedisLevel(msg)
	if level == slog.LevelWarn && g.repeated(msg, time.Now()) {
		level = slog.LevelDebug
	}
	g.log.Log(ctx, level, "go-redis: "+msg)
}

// repeated reports whether msg was warned about less than warnRepeat
// before now; if not, it is noted as warned about now. Lines differ by
// address (each sentinel, each Cluster node), so several are kept, up to
// maxWarned.
func (g *GoRedisLogger) repeated(msg string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if at, ok := g.warned[msg]; ok && now.Sub(at) < warnRepeat {
		return true
	}
	if len(g.warned) >= maxWarned {
		for m, at := range g.warned {
			if now.Sub(at) >= warnRepeat {
				delete(g.warned, m)
			}
		}
		if len(g.warned) >= maxWarned {
			clear(g.warned) // all recent: forget them rather than grow
		}
	}
	if g.warned == nil {
		g.warned = make(map[string]time.Time)
	}
	g.warned[msg] = now
	return false
}

// maxWarned bounds the lines GoRedisLogger remembers.
const maxWarned = 64

// goRedisLevel is the level of one of go-redis's log lines: Warn for
// what failed, Info for the rest.
func goRedisLevel(msg string) slog.Level {
	lower := strings.ToLower(msg)
	for _, w := range []string{"fail", "error", "panic", "unable", "cannot", "invalid", "unknown"} {
		if strings.Contains(lower, w) {
			return slog.LevelWarn
		}
	}
	return slog.LevelInfo
}
