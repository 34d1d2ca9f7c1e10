package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// GoRedisLogger writes go-redis's own log lines to an slog.Logger, each
// at the level it deserves: routine events (a sentinel chosen, a new
// master, a sentinel discovered, slots migrated) at Info, failures at
// Warn. go-redis has one logger for the whole process, so install it once,
// in main: redis.SetLogger(redisstore.NewGoRedisLogger(logger)).
type GoRedisLogger struct{ log *slog.Logger }

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
	g.log.Log(ctx, goRedisLevel(msg), "go-redis: "+msg)
}

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
