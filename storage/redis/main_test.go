package redisstore

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

// TestMain silences go-redis's own log, which would print a line for every
// failed dial of the tests that stop or never start Redis on purpose; the
// tests check the errors the store returns instead.
func TestMain(m *testing.M) {
	redis.SetLogger(&logging.VoidLogger{})
	os.Exit(m.Run())
}
