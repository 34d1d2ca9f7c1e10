package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// openMiniredis returns a redisstore on an in-process miniredis.
func openMiniredis(t testing.TB, items ...inventory.Item) inventory.Store {
	m := miniredis.RunT(t)
	return openRedisStore(t, "redis://"+m.Addr()+"/0", items)
}

// openRedis returns a redisstore on the redis-server at REDIS_URL, under a
// key prefix of its own that is deleted afterwards; it skips when
// REDIS_URL is unset and fails when it is set but Redis does not answer.
func openRedis(t testing.TB, items ...inventory.Item) inventory.Store {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL is not set; REDIS_URL=redis://127.0.0.1:6379/0 runs the suite against a real redis-server")
	}
	return openRedisStore(t, url, items)
}

func openRedisStore(t testing.TB, url string, items []inventory.Item) inventory.Store {
	t.Helper()
	cfg, err := redisstore.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.NewClient()
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at %s does not answer PING: %v", cfg, err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix := "e2e-" + hex.EncodeToString(b)
	s, err := redisstore.New(c, redisstore.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Clear(ctx); err != nil {
			t.Errorf("cleaning up Redis prefix %q: %v", prefix, err)
		}
	})
	if len(items) > 0 {
		if err := s.Put(ctx, items...); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
