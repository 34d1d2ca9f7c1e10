package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/redis/go-redis/v9"
)

const enableRealRedis = "REDIS_URL=redis://127.0.0.1:6379/0 go test ./..."

// miniClient starts an in-process miniredis for the test and returns a
// client on it, with the store's timeouts.
func miniClient(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	opts, err := optionsFromURL("redis://" + m.Addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

// realClient returns a client on the redis-server at REDIS_URL, or skips
// the test when REDIS_URL is unset. A REDIS_URL that does not answer is a
// failure, not a skip: whoever set it meant these tests to run.
func realClient(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skipf("REDIS_URL is not set, so the tests against a real redis-server are skipped; `%s` enables them", enableRealRedis)
	}
	opts, err := optionsFromURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("REDIS_URL is set but Redis does not answer PING: %v", err)
	}
	return c
}

// backends runs fn against miniredis, and against the real redis-server
// when REDIS_URL is set.
func backends(t *testing.T, fn func(t *testing.T, c *redis.Client)) {
	t.Run("miniredis", func(t *testing.T) {
		_, c := miniClient(t)
		fn(t, c)
	})
	t.Run("redis-server", func(t *testing.T) {
		fn(t, realClient(t))
	})
}

// uniquePrefix returns a key prefix no other test (or test run sharing the
// same Redis) uses.
func uniquePrefix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "test-inventory-" + hex.EncodeToString(b)
}

// newTestStore returns a store over c under a fresh prefix, and deletes
// that prefix's keys, and only those, when the test ends.
func newTestStore(t *testing.T, c redis.UniversalClient, opts ...Option) *Store {
	t.Helper()
	s, err := New(c, append([]Option{WithKeyPrefix(uniquePrefix(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	clearAfter(t, s)
	return s
}

// clearAfter deletes the store's keys, and only those, when the test ends.
func clearAfter(t *testing.T, s *Store) {
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Clear(ctx); err != nil {
			t.Logf("cleaning up prefix %q: %v", s.KeyPrefix(), err)
		}
	})
}

// discardLog is a logger for stores whose configuration errors a test
// provokes on purpose.
var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// storeAtURL opens a store with opts on a client that ParseURL builds from
// url, closed when the test ends, with WithClientConfig.
func storeAtURL(t *testing.T, url string, opts ...Option) *Store {
	t.Helper()
	cfg, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.NewClient()
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(c, append([]Option{WithClientConfig(cfg)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// optionsFromURL is ParseURL for a URL of one node.
func optionsFromURL(url string) (*redis.Options, error) {
	c, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if c.Topology != Single {
		return nil, fmt.Errorf("%s names a %s, not one node", url, c.Topology)
	}
	return c.Single, nil
}

// snapshotPets is the size of storetest's snapshot-under-writes check
// here. The writer makes two writes per pet, each a round trip to Redis,
// so its default of 3000 pets takes 40 to 60 s a topology on two shared
// cores: that runs with PETINVENTORY_LONG=1 (CI). 600 pets still make a
// full read several HSCAN pages (COUNT 300 over a table of 1024 buckets),
// between which the writer's writes land, which is what the check proves.
func snapshotPets() int {
	if proctest.LongRuns() {
		return 3000
	}
	return 600
}
