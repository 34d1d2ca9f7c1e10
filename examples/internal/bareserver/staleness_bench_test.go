package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
	"github.com/redis/go-redis/v9"
)

const benchKey = "bench-key"

// discard is a ResponseWriter that keeps the headers and drops the body,
// the same for every side, so that what is compared is the handlers.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// libEngine is examples/redis's engine (gin.New with Recovery, the API
// under /v1) on a Redis store seeded with items, with opts.
func libEngine(b *testing.B, client *redis.Client, prefix string, items []inventory.Item, opts ...inventory.Option) *gin.Engine {
	b.Helper()
	store, err := redisstore.New(client, redisstore.WithKeyPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, append([]inventory.Option{inventory.WithAPIKeys(benchKey), inventory.WithStoreTimeout(2 * time.Second)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	if err := api.Service().Put(context.Background(), items...); err != nil {
		b.Fatal(err)
	}
	if err := api.Preload(context.Background()); err != nil {
		b.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery())
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		b.Fatal(err)
	}
	return engine
}

// commandStats returns the calls of every command and of XRANGE (the list
// read) node has answered so far.
func commandStats(b *testing.B, node *redistest.Node) (all, xrange int) {
	b.Helper()
	info, err := node.DoString("INFO", "commandstats")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(v, ",")
		n, err := strconv.Atoi(calls)
		if err != nil {
			b.Fatalf("INFO commandstats: %q", line)
		}
		if name == "cmdstat_info" {
			continue // this function's own
		}
		all += n
		if name == "cmdstat_xrange" {
			xrange = n
		}
	}
	return all, xrange
}

// BenchmarkListStaleness measures, side by side, the list of 100 and of
// 10 000 pets through Gin on a real Redis with a staleness bound of 50 ms
// (bound50ms), strict (strict: every list reads Redis), and bare Gin
// answering the same bytes from memory (bare, as bareserver does; the
// yardstick). Throughput is ns/op of 4 callers per CPU, in process (bare
// ns/op ÷ bound50ms ns/op is the fraction of bare Gin's throughput kept;
// scripts/bench/list-load.sh measures the same over sockets); for the
// Redis sides it reports Redis's commands per second and list reads
// (XRANGE) per 50 ms during the pure list load, from INFO commandstats.
//
//	cd examples && go test ./internal/bareserver -run '^$' -bench ListStaleness -benchmem -count 5
func BenchmarkListStaleness(b *testing.B) {
	node := redistest.StartNode(b, "bench-staleness")
	client := redis.NewClient(&redis.Options{Addr: node.Addr(), PoolSize: 32})
	b.Cleanup(func() { client.Close() })
	for _, n := range []int{100, 10000} {
		items := benchfix.Items(n)
		bounded := libEngine(b, client, fmt.Sprintf("bound%d", n), items, inventory.WithMaxStaleness(50*time.Millisecond))
		strict := libEngine(b, client, fmt.Sprintf("strict%d", n), items)
		body := answer(b, strict)
		if got := answer(b, bounded); !bytes.Equal(got, body) {
			b.Fatalf("the bounded and strict lists differ")
		}
		bare := newEngine(body, benchKey, false)
		if got := answer(b, bare); !bytes.Equal(got, body) {
			b.Fatalf("bare Gin does not answer the same bytes")
		}
		for _, side := range []struct {
			name   string
			engine *gin.Engine
			redis  bool
		}{{"bound50ms", bounded, true}, {"strict", strict, true}, {"bare", bare, false}} {
			b.Run(fmt.Sprintf("items=%d/%s", n, side.name), func(b *testing.B) {
				var all0, x0 int
				if side.redis {
					all0, x0 = commandStats(b, node)
				}
				start := time.Now()
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				b.SetParallelism(4) // 4 callers per CPU, as the load tests' 8 connections on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
					req.Header.Set("Authorization", "Bearer "+benchKey)
					w := &discard{h: http.Header{}}
					for pb.Next() {
						clear(w.h)
						side.engine.ServeHTTP(w, req)
					}
				})
				elapsed := time.Since(start)
				if side.redis {
					all1, x1 := commandStats(b, node)
					b.ReportMetric(float64(all1-all0)/elapsed.Seconds(), "redis-cmds/s")
					b.ReportMetric(float64(x1-x0)/(elapsed.Seconds()/0.05), "reads/50ms")
				}
			})
		}
	}
}

// answer is engine's list body, checked 200.
func answer(b *testing.B, engine http.Handler) []byte {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
	req.Header.Set("Authorization", "Bearer "+benchKey)
	rec := httptest.NewRecorder()
	engine.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	body, _ := io.ReadAll(rec.Body)
	return body
}
