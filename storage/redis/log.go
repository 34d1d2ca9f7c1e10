package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/petinventory/petinventory/storage/redis/internal/logrepeat"
)

// GoRedisLogger writes go-redis's own log lines to an slog.Logger, each
// at the level it deserves: routine events (a sentinel chosen, a new
// master, a sentinel discovered, slots migrated) at Info, failures (and a
// command an ACL user may not run, NOPERM) at Warn. A failure go-redis
// repeats (a dial retried every second while Redis is down or refuses the
// TLS handshake) is warned about once a minute, with the count of the
// repeats held back in between (attribute "repeated"); the repeats go to
// Debug. go-redis's lines about a connection that broke under it ("push:
// pre-command drain failed", "reply stream desynchronized", a reset or
// EOF: a CLIENT KILL, a restart or the network closed it) differ by
// address and port, so they are counted as one: warned about once a
// minute in the store's words, with the count held back, the raw lines
// at Debug; go-redis drops such a connection and the store retries what
// may be retried (see Store.SetQuantity). go-redis has one logger for the
// whole process, so install it once, in main:
// redis.SetLogger(redisstore.NewGoRedisLogger(logger)).
type GoRedisLogger struct {
	log  *slog.Logger
	gate logrepeat.Gate // which repeats of a failure are warned about
}

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
	broken := brokenConnLine(msg)
	if broken {
		level = slog.LevelWarn
	}
	if level != slog.LevelWarn {
		g.log.Log(ctx, level, "go-redis: "+msg)
		return
	}
	key, line := msg, "go-redis: "+msg
	if broken {
		key, line = connCutKey, connCutLine
	}
	ok, held := g.gate.Allow(key, time.Now())
	switch {
	case !ok:
		g.log.Log(ctx, slog.LevelDebug, "go-redis: "+msg)
	case held > 0:
		g.log.Log(ctx, level, line, "repeated", held)
	default:
		g.log.Log(ctx, level, line)
	}
}

// connCutKey is the one key of the gate for every line of go-redis about
// a broken connection, and connCutLine what is warned in their place.
const (
	connCutKey  = "\x00connection cut"
	connCutLine = "go-redis: connections to Redis were closed under it (CLIENT KILL, a restart, a timeout of idle clients, the network); it dropped them and dials new ones, the store runs cut reads again and updates cut before EXEC (repeats counted in \"repeated\", each at debug level)"
)

// brokenConnLine reports whether one of go-redis's warnings is about a
// connection that broke under it, whatever its addresses.
func brokenConnLine(msg string) bool {
	lower := strings.ToLower(msg)
	for _, w := range []string{"pre-command drain failed", "desynchronized", "connection reset", "broken pipe",
		"eof", "use of closed network connection", "bad state", "retiring conn"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// goRedisLevel is the level of one of go-redis's log lines: Warn for
// what failed, Info for the rest.
func goRedisLevel(msg string) slog.Level {
	lower := strings.ToLower(msg)
	for _, w := range []string{"fail", "error", "panic", "unable", "cannot", "invalid", "unknown", "noperm"} {
		if strings.Contains(lower, w) {
			return slog.LevelWarn
		}
	}
	return slog.LevelInfo
}
