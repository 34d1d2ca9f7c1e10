package redisstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestMain silences go-redis's own log, which would print a line for every
// failed dial of the tests that stop or never start Redis on purpose; the
// tests check the errors the store returns instead. It keeps the lines
// that say NOPERM (a client asking for what its ACL user may not run),
// which TestACLRuleTopologies checks there are none of.
func TestMain(m *testing.M) {
	redis.SetLogger(goRedisLog)
	os.Exit(m.Run())
}

// goRedisLog is go-redis's logger in the tests.
var goRedisLog = &nopermLines{}

// nopermLines drops go-redis's log lines but those that say NOPERM.
type nopermLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *nopermLines) Printf(_ context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if !strings.Contains(msg, "NOPERM") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg)
}

// String returns the lines kept, one a line.
func (l *nopermLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
