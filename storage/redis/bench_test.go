package redisstore_test

// The benchmarks measure what the library adds on top of Redis, and the
// test TestRoundTrips checks that a list and an update cost a constant
// number of round trips whatever the size of the inventory (against
// miniredis, and against a redis-server it starts itself when one is on
// PATH).
//
// Every benchmark runs against an in-process miniredis (so that
// `go test -run '^$' -bench . -benchtime=1x` executes it anywhere) and
// against the redis-server at REDIS_URL when it is set; the backend is the
// first part of the sub-benchmark's name. Only the redis-server figures
// mean anything: miniredis serialises every command behind one lock.
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go test -run '^$' -bench . -benchmem -count 3
//
// BenchmarkUpdate/{backend}/{distinct,hot}/{api,store,raw,raw2} runs 32
// concurrent callers (exactly, whatever GOMAXPROCS is) that set quantities:
// "distinct" gives each caller a pet of its own, "hot" sends all of them to
// pet 1. The three sides do the same Redis work at the same concurrency,
// over the same client settings (a pool of 32 connections, dialled before
// the timer starts):
//
//   - api: inventory.API over the store, with the store timeout the
//     examples use, driven in-process through API.ServeHTTP with one
//     reusable request and ResponseWriter per caller (no sockets, so HTTP
//     parsing costs nothing here and the ratio is the library's own cost);
//   - store: Store.SetQuantity alone;
//   - raw: the go-redis optimistic-transaction loop of ExampleClient_Watch
//     doing what the store does without the library: WATCH the pet's guard
//     key, HGET its status, MULTI, HSET its quantity, EXEC, retried on
//     redis.TxFailedErr: three round trips;
//   - raw2: the same loop in the store's two round trips (WATCH and HGET
//     pipelined on the transaction's connection, then MULTI…EXEC).
//
// raw ns/op ÷ api ns/op is the fraction of the raw loop's throughput the
// API keeps (above 1 when the API is faster); raw2 ns/op ÷ store ns/op is
// what the library costs over the same two round trips. Each reports aborts/op (EXECs refused because a watched key
// changed) and exhausted (calls that ran out of retries, 503 through the
// API), from Store.Stats for api and store and counted by the loop for raw.
//
// BenchmarkList/{backend}/items=N/{api,store}-{unchanged,changed},
// …/store-full and …/raw list an inventory of N pets (10, 1 000, 10 000
// and 100 000) from one caller. The store is an inventory.ChangeLister:
// "unchanged" lists while nothing is written (store: ListChanges of the
// current cursor, one XRANGE); "changed" updates one pet before each list
// (outside the timer and the round-trip count), so the list reads that one
// change (store: ListChanges of the previous cursor). store-full is a full
// read (Store.List: HSCAN chunks and the log replay). raw is HSCAN of the
// items hash in the same chunks with nothing parsed.
//
// All benchmarks report rtts/op (round trips: commands and pipelines that
// go-redis sent, counted by a hook) and, on redis-server, cmds/op (the
// delta of INFO commandstats, without the INFO calls themselves and the
// HELLO and CLIENT commands of new connections).
//
// Each benchmark uses a key prefix of its own and deletes its keys with
// Store.Clear (SCAN on the prefix's hash tag, then DEL) when it ends;
// nothing here runs FLUSHDB or KEYS, so a shared Redis is safe, though
// other clients' traffic makes cmds/op larger than the store's own.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

const (
	benchCallers = 32 // concurrent callers of BenchmarkUpdate
	// benchMaxRetries is the store's default, which the raw loop mirrors.
	benchMaxRetries = 10
	benchEnable     = "REDIS_URL=redis://127.0.0.1:6379/0 go test -run '^$' -bench . ./storage/redis"
)

// benchQuantity is the quantity the i-th operation writes.
func benchQuantity(i int) int { return i % benchfix.Bodies * 7919 % 100000 }

// roundTrips counts what a client sends to Redis: one per command sent
// alone and one per pipeline (a MULTI/EXEC transaction included), which
// go-redis writes at once and whose replies it reads at once.
type roundTrips struct{ n atomic.Int64 }

func (*roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// benchRedis is one Redis to run against.
type benchRedis struct {
	url  string // a redis:// URL, or
	unix string // the path of a Unix socket
	real bool   // a redis-server, which has INFO commandstats
	// shared: other clients may use this Redis at the same time, so
	// INFO commandstats deltas may count their commands too.
	shared bool
}

// forEachRedis runs fn against a fresh miniredis, then against the
// redis-server at REDIS_URL, or skips that half with the way to enable it.
// A REDIS_URL that does not answer is a failure, not a skip.
func forEachRedis[T interface {
	testing.TB
	Run(string, func(T)) bool
}](t T, fn func(t T, r benchRedis)) {
	t.Run("miniredis", func(t T) {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		fn(t, benchRedis{url: "redis://" + m.Addr() + "/0"})
	})
	t.Run("redis-server", func(t T) {
		url := os.Getenv("REDIS_URL")
		if url == "" {
			t.Skipf("REDIS_URL is not set, so the figures against a real redis-server are skipped; `%s` runs them", benchEnable)
		}
		fn(t, benchRedis{url: url, real: true, shared: true})
	})
}

// privateRedis starts a redis-server of the test's own, listening only on
// a Unix socket in a temporary directory (no port to collide on), with no
// persistence, and stops it when the test ends. ok is false when there is
// no redis-server on PATH.
func privateRedis(t *testing.T) (r benchRedis, ok bool) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return benchRedis{}, false
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := c.Ping(t.Context()).Err()
		if err == nil {
			return benchRedis{unix: sock, real: true}, true
		}
		select {
		case werr := <-exited:
			exited <- werr // for the cleanup
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server exited (%v) before answering PING:\n%s", werr, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING within 10s: %v", sock, err)
		}
	}
}

// client returns a client on r with the store's settings, a pool of
// poolSize connections (all dialled and idle on return), and a round-trip
// counter; closed when tb ends.
func (r benchRedis) client(tb testing.TB, poolSize int) (*redis.Client, *roundTrips) {
	tb.Helper()
	opts := &redis.Options{Network: "unix", Addr: r.unix}
	redisstore.ApplyTimeouts(opts)
	if r.unix == "" {
		var err error
		cfg, err := redisstore.ParseURL(r.url)
		if err != nil || cfg.Topology != redisstore.Single {
			tb.Fatalf("REDIS_URL: want one node: %v", err)
		}
		opts = cfg.Single
	}
	opts.PoolSize = poolSize
	c := redis.NewClient(opts)
	tb.Cleanup(func() { _ = c.Close() })
	// Dial every connection now, so that no dial is timed or counted.
	var wg sync.WaitGroup
	errs := make(chan error, poolSize)
	for range poolSize {
		wg.Go(func() {
			err := c.Watch(context.Background(), func(tx *redis.Tx) error {
				time.Sleep(10 * time.Millisecond) // hold the connection while the others dial
				return tx.Ping(context.Background()).Err()
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			tb.Fatalf("Redis at %s does not answer: %v", redactURL(r.url+r.unix), err)
		}
	}
	rt := &roundTrips{}
	c.AddHook(rt)
	return c, rt
}

func redactURL(u string) string {
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		return "redis://…" + u[i:]
	}
	return u
}

// newBenchStore returns a store on c under a prefix of its own, holding
// items, whose keys are deleted when tb ends.
func newBenchStore(tb testing.TB, c *redis.Client, items []inventory.Item) *redisstore.Store {
	tb.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	// As inventory-server builds it: serving only an initialized store,
	// whose check rides in the pipelines the figures count.
	s, err := redisstore.New(c, redisstore.WithKeyPrefix("bench-"+hex.EncodeToString(b)), redisstore.WithRequireInitialized())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Clear(ctx); err != nil {
			tb.Errorf("deleting the keys of prefix %q: %v", s.KeyPrefix(), err)
		}
	})
	ctx := context.Background()
	for chunk := range slices.Chunk(items, 1000) {
		if err := s.Put(ctx, chunk...); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := s.Initialize(ctx); err != nil { // adopts the entries just put, or initializes none
		tb.Fatal(err)
	}
	return s
}

// commandCalls returns the calls of every command since Redis started,
// from INFO commandstats, without those a benchmark does not make: INFO
// itself, and HELLO and CLIENT, which go-redis sends on a new connection.
func commandCalls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	calls := make(map[string]int64)
	for line := range strings.Lines(info) {
		// cmdstat_hget:calls=12,usec=34,usec_per_call=2.83,...
		name, stats, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(stats, "calls=") {
			continue
		}
		if name == "info" || name == "hello" || strings.HasPrefix(name, "client") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(strings.SplitN(stats, ",", 2)[0], "calls="), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("INFO commandstats line %q: %v", line, err)
		}
		calls[name] = n
	}
	return calls, nil
}

// commandDelta returns after − before, command by command, without zeros.
func commandDelta(before, after map[string]int64) map[string]int64 {
	d := make(map[string]int64)
	for name, n := range after {
		if n -= before[name]; n != 0 {
			d[name] = n
		}
	}
	return d
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// formatCalls prints a command count map in a stable order.
func formatCalls(m map[string]int64) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, m[n])
	}
	return strings.Join(parts, " ")
}

// meter reports rtts/op, and cmds/op against a redis-server, over the
// timed part of a benchmark.
type meter struct {
	b      *testing.B
	c      *redis.Client
	rt     *roundTrips
	real   bool
	rtts0  int64
	calls0 map[string]int64
}

func startMeter(b *testing.B, c *redis.Client, rt *roundTrips, r benchRedis) *meter {
	b.Helper()
	m := &meter{b: b, c: c, rt: rt, real: r.real, rtts0: rt.n.Load()}
	if r.real {
		var err error
		if m.calls0, err = commandCalls(context.Background(), c); err != nil {
			b.Fatal(err)
		}
		m.rtts0 = rt.n.Load() // without the INFO
	}
	return m
}

func (m *meter) report(ops int) {
	m.b.Helper()
	rtts := m.rt.n.Load() - m.rtts0
	m.b.ReportMetric(float64(rtts)/float64(ops), "rtts/op")
	if m.real {
		calls, err := commandCalls(context.Background(), m.c)
		if err != nil {
			m.b.Fatal(err)
		}
		m.b.ReportMetric(float64(sum(commandDelta(m.calls0, calls)))/float64(ops), "cmds/op")
	}
}

// runCallers runs ops operations over exactly callers goroutines, each
// taking the next operation number until none is left, and returns the
// first error.
func runCallers(ops, callers int, op func(caller, i int) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for g := range callers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= ops {
					return
				}
				if err := op(g, i); err != nil {
					errOnce.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// errExhausted is what the raw loop returns when its retries ran out.
var errExhausted = errors.New("raw: optimistic transaction retries exhausted")

// rawKeys are the store's keys for one prefix, as its package doc lays
// them out.
type rawKeys struct{ items, log, guard string }

func rawKeysOf(s *redisstore.Store) rawKeys {
	tag := "{" + s.KeyPrefix() + "}:"
	return rawKeys{items: tag + "items", log: tag + "log", guard: tag + "guard:"}
}

// rawSetQuantity is the go-redis transaction loop of ExampleClient_Watch
// doing the Redis work of Store.SetQuantity without the library: WATCH
// the guard, HGET the status (redis.Nil when the pet has no entry), MULTI
// HSET XADD EXEC, retried at once on TxFailedErr at most benchMaxRetries
// times.
// It returns the status read and how many EXECs were aborted.
func rawSetQuantity(ctx context.Context, c *redis.Client, k rawKeys, petID int64, qty int) (string, int, error) {
	f := strconv.FormatInt(petID, 10)
	var status string
	txf := func(tx *redis.Tx) error {
		entry, err := tx.HGet(ctx, k.items, f).Result()
		if err != nil {
			return err
		}
		_, status, _ = strings.Cut(entry, ":")
		return rawWrite(ctx, tx, k, f, qty, status)
	}
	aborts := 0
	for range benchMaxRetries + 1 {
		err := c.Watch(ctx, txf, k.guard+f)
		if err == nil {
			return status, aborts, nil
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return "", aborts, err
		}
		aborts++
	}
	return "", aborts, errExhausted
}

// rawWrite is the raw loops' MULTI HSET XADD EXEC: the new quantity with
// the status read, logged as the store logs it.
func rawWrite(ctx context.Context, tx *redis.Tx, k rawKeys, f string, qty int, status string) error {
	q := strconv.Itoa(qty)
	_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k.items, f, q+":"+status)
		p.XAdd(ctx, &redis.XAddArgs{Stream: k.log, MaxLen: 10000, Approx: true,
			Values: []string{"n", "0", "op", "set", "d", f + ":" + q + ":" + status}})
		return nil
	})
	return err
}

// rawSetQuantity2 is rawSetQuantity in two round trips: WATCH and HGET in
// one pipeline on the transaction's connection, then MULTI HSET XADD
// EXEC; UNWATCH when it ends without EXEC.
func rawSetQuantity2(ctx context.Context, c *redis.Client, k rawKeys, petID int64, qty int) (string, int, error) {
	f := strconv.FormatInt(petID, 10)
	var status string
	txf := func(tx *redis.Tx) error {
		watch := redis.NewStatusCmd(ctx, "watch", k.guard+f)
		var hget *redis.StringCmd
		_, _ = tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			_ = p.Process(ctx, watch)
			hget = p.HGet(ctx, k.items, f)
			return nil
		})
		if err := watch.Err(); err != nil {
			return err
		}
		entry, err := hget.Result()
		if err != nil {
			_ = tx.Unwatch(ctx).Err()
			return err
		}
		_, status, _ = strings.Cut(entry, ":")
		return rawWrite(ctx, tx, k, f, qty, status)
	}
	aborts := 0
	for range benchMaxRetries + 1 {
		err := c.Watch(ctx, txf)
		if err == nil {
			return status, aborts, nil
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return "", aborts, err
		}
		aborts++
	}
	return "", aborts, errExhausted
}

// rawList is the bulk of what Store.List asks of Redis, without the
// library: the items hash in HSCAN chunks of 1 000, nothing parsed, sorted
// or deduplicated.
func rawList(ctx context.Context, c *redis.Client, k rawKeys) (int, error) {
	var cursor uint64
	n := 0
	for {
		kv, next, err := c.HScan(ctx, k.items, cursor, "", 1000).Result()
		if err != nil {
			return 0, err
		}
		n += len(kv) / 2
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

// benchAPI returns the API over store as the examples configure it: the
// key, a store timeout, and a silent logger (503s would log warnings).
func benchAPI(tb testing.TB, store inventory.Store) *inventory.API {
	tb.Helper()
	api, err := inventory.New(store, inventory.WithAPIKeys(benchfix.Key),
		inventory.WithStoreTimeout(2*time.Second),
		inventory.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		tb.Fatal(err)
	}
	return api
}

// apiCaller is one caller's reusable PATCH request to the API.
type apiCaller struct {
	api  *inventory.API
	req  *http.Request
	body *benchfix.Body
	w    *benchfix.Writer
}

func newAPICaller(api *inventory.API, petID int64) *apiCaller {
	c := &apiCaller{api: api, body: &benchfix.Body{}, w: benchfix.NewWriter()}
	c.req = httptest.NewRequest(http.MethodPatch, "/inventory/"+strconv.FormatInt(petID, 10), nil)
	c.req.Header.Set("Authorization", benchfix.Bearer)
	c.req.Header.Set("Content-Type", "application/json")
	c.req.Body = c.body
	return c
}

// patch sends {"quantity":qty} and returns the status.
func (c *apiCaller) patch(body []byte) int {
	c.body.Reset(body)
	c.req.ContentLength = int64(len(body))
	c.w.Reset()
	c.api.ServeHTTP(c.w, c.req)
	return c.w.Status
}

func BenchmarkUpdate(b *testing.B) {
	bodies := make([][]byte, benchfix.Bodies)
	for i := range bodies {
		bodies[i] = []byte(`{"quantity":` + strconv.Itoa(benchQuantity(i)) + `}`)
	}
	forEachRedis(b, func(b *testing.B, r benchRedis) {
		for _, pets := range []string{"distinct", "hot"} {
			// petOf is the pet a caller updates.
			petOf := func(caller int) int64 { return int64(caller + 1) }
			if pets == "hot" {
				petOf = func(int) int64 { return 1 }
			}
			b.Run(pets+"/api", func(b *testing.B) {
				c, rt := r.client(b, benchCallers)
				store := newBenchStore(b, c, benchfix.Items(100))
				api := benchAPI(b, store)
				callers := make([]*apiCaller, benchCallers)
				for g := range callers {
					callers[g] = newAPICaller(api, petOf(g))
				}
				// The answer is the item with the quantity just written.
				if st := callers[0].patch(bodies[0]); st != http.StatusOK {
					b.Fatalf("setup: status %d: %s", st, callers[0].w.Body)
				}
				want := inventory.Item{PetID: 1, Quantity: benchQuantity(0), Status: inventory.StatusAvailable}
				if wantBody, _ := json.Marshal(want); string(callers[0].w.Body) != string(wantBody) {
					b.Fatalf("setup: body %s, want %s", callers[0].w.Body, wantBody)
				}
				var unavailable atomic.Int64
				stats0 := store.Stats()
				m := startMeter(b, c, rt, r)
				b.ResetTimer()
				err := runCallers(b.N, benchCallers, func(g, i int) error {
					switch st := callers[g].patch(bodies[i%benchfix.Bodies]); st {
					case http.StatusOK:
					case http.StatusServiceUnavailable: // retries exhausted, counted below
						unavailable.Add(1)
					default:
						return fmt.Errorf("status %d: %s", st, callers[g].w.Body)
					}
					return nil
				})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				reportTx(b, m, store.Stats(), stats0)
				if n := unavailable.Load(); n != int64(store.Stats().RetriesExhausted-stats0.RetriesExhausted) {
					b.Errorf("%d answers 503, but the store counts %d exhausted retries", n, store.Stats().RetriesExhausted-stats0.RetriesExhausted)
				}
			})
			b.Run(pets+"/store", func(b *testing.B) {
				c, rt := r.client(b, benchCallers)
				store := newBenchStore(b, c, benchfix.Items(100))
				ctx := context.Background()
				stats0 := store.Stats()
				m := startMeter(b, c, rt, r)
				b.ResetTimer()
				err := runCallers(b.N, benchCallers, func(g, i int) error {
					_, err := store.SetQuantity(ctx, petOf(g), benchQuantity(i))
					if errors.Is(err, inventory.ErrUnavailable) && store.Stats().RetriesExhausted > stats0.RetriesExhausted {
						return nil // counted in Stats and reported
					}
					return err
				})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				reportTx(b, m, store.Stats(), stats0)
			})
			for _, raw := range []struct {
				name string
				set  func(context.Context, *redis.Client, rawKeys, int64, int) (string, int, error)
			}{{"raw", rawSetQuantity}, {"raw2", rawSetQuantity2}} {
				name, set := raw.name, raw.set
				b.Run(pets+"/"+name, func(b *testing.B) {
					c, rt := r.client(b, benchCallers)
					store := newBenchStore(b, c, benchfix.Items(100))
					keys := rawKeysOf(store)
					ctx := context.Background()
					if st, _, err := set(ctx, c, keys, 1, 1); err != nil || st != "available" {
						b.Fatalf("setup: %s update of pet 1 = %q, %v; want available", name, st, err)
					}
					var aborts, exhausted atomic.Uint64
					m := startMeter(b, c, rt, r)
					b.ResetTimer()
					err := runCallers(b.N, benchCallers, func(g, i int) error {
						_, n, err := set(ctx, c, keys, petOf(g), benchQuantity(i))
						aborts.Add(uint64(n))
						if errors.Is(err, errExhausted) {
							exhausted.Add(1)
							return nil
						}
						return err
					})
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					reportTx(b, m, redisstore.Stats{WatchAborts: aborts.Load(), RetriesExhausted: exhausted.Load()}, redisstore.Stats{})
				})
			}
		}
	})
}

// reportTx reports the meter's figures and how the optimistic
// transactions went between stats0 and stats.
func reportTx(b *testing.B, m *meter, stats, stats0 redisstore.Stats) {
	b.Helper()
	m.report(b.N)
	b.ReportMetric(float64(stats.WatchAborts-stats0.WatchAborts)/float64(b.N), "aborts/op")
	b.ReportMetric(float64(stats.RetriesExhausted-stats0.RetriesExhausted), "exhausted")
}

func BenchmarkList(b *testing.B) {
	forEachRedis(b, func(b *testing.B, r benchRedis) {
		for _, n := range []int{10, 1000, 10000, 100000} {
			b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
				c, rt := r.client(b, 2)
				store := newBenchStore(b, c, benchfix.Items(n))
				ctx := context.Background()
				// write changes the inventory between two timed lists;
				// its round trips are taken out of rtts/op.
				write := func(b *testing.B, m *meter, i int) {
					b.StopTimer()
					before := rt.n.Load()
					if _, err := store.SetQuantity(ctx, 1, benchQuantity(i)); err != nil {
						b.Fatal(err)
					}
					m.rtts0 += rt.n.Load() - before
					b.StartTimer()
				}
				apiList := func(b *testing.B, changed bool) {
					api := benchAPI(b, store)
					req := httptest.NewRequest(http.MethodGet, "/inventory", nil)
					req.Header.Set("Authorization", benchfix.Bearer)
					w := benchfix.NewWriter()
					api.ServeHTTP(w, req)
					if w.Status != http.StatusOK || !bytes.HasPrefix(w.Body, []byte(`[{"petId":1,`)) {
						b.Fatalf("setup: status %d, body %.100s", w.Status, w.Body)
					}
					b.ReportAllocs()
					m := startMeter(b, c, rt, r)
					b.ResetTimer()
					for i := range b.N {
						if changed {
							write(b, m, i)
						}
						w.Reset()
						api.ServeHTTP(w, req)
						if w.Status != http.StatusOK {
							b.Fatalf("status %d: %s", w.Status, w.Body)
						}
					}
					b.StopTimer()
					m.report(b.N)
				}
				b.Run("api-unchanged", func(b *testing.B) { apiList(b, false) })
				b.Run("api-changed", func(b *testing.B) { apiList(b, true) })
				storeList := func(b *testing.B, changed bool) {
					ch, err := store.ListChanges(ctx, "")
					if err != nil || !ch.Full || len(ch.Items) != n {
						b.Fatalf("ListChanges(\"\") = %d items, full %v, %v; want %d, full", len(ch.Items), ch.Full, err, n)
					}
					cursor := ch.Cursor
					b.ReportAllocs()
					m := startMeter(b, c, rt, r)
					b.ResetTimer()
					for i := range b.N {
						if changed {
							write(b, m, i)
						}
						ch, err := store.ListChanges(ctx, cursor)
						want := 0
						if changed {
							want = 1
						}
						if err != nil || ch.Full || len(ch.Log) != want {
							b.Fatalf("ListChanges = full %v, %d changes, %v; want %d changes", ch.Full, len(ch.Log), err, want)
						}
						cursor = ch.Cursor
					}
					b.StopTimer()
					m.report(b.N)
				}
				b.Run("store-unchanged", func(b *testing.B) { storeList(b, false) })
				b.Run("store-changed", func(b *testing.B) { storeList(b, true) })
				b.Run("store-full", func(b *testing.B) {
					b.ReportAllocs()
					m := startMeter(b, c, rt, r)
					ops := 0
					for b.Loop() {
						items, err := store.List(ctx)
						if err != nil || len(items) != n {
							b.Fatalf("List = %d items, %v; want %d", len(items), err, n)
						}
						ops++
					}
					m.report(ops)
				})
				b.Run("raw", func(b *testing.B) {
					keys := rawKeysOf(store)
					m := startMeter(b, c, rt, r)
					ops := 0
					b.ReportAllocs()
					for b.Loop() {
						got, err := rawList(ctx, c, keys)
						if err != nil || got != n {
							b.Fatalf("raw list = %d entries, %v; want %d", got, err, n)
						}
						ops++
					}
					m.report(ops)
				})
			})
		}
	})
}

// BenchmarkUpdateReplicaAcks/redis-server/distinct/{store-noacks,store-acks1} runs the 32 callers of
// BenchmarkUpdate (distinct pets, Store.SetQuantity) against a master with
// one replica, both started by the benchmark (internal/redistest), without
// and with WithReplicaAcks(1, 500ms): the cost of waiting for the replica
// after each write (WAIT, one more round trip). miniredis has no
// replication, so there is no miniredis half; without redis-server it is
// skipped.
func BenchmarkUpdateReplicaAcks(b *testing.B) {
	r := benchReplicated(b)
	for _, acks := range []int{0, 1} {
		name := "redis-server/distinct/store-noacks"
		var opts []redisstore.Option
		if acks > 0 {
			name = fmt.Sprintf("redis-server/distinct/store-acks%d", acks)
			opts = append(opts, redisstore.WithReplicaAcks(acks, 500*time.Millisecond))
		}
		b.Run(name, func(b *testing.B) {
			c, rt := r.client(b, benchCallers)
			seed := newBenchStore(b, c, benchfix.Items(100))
			store, err := redisstore.New(c, append(opts, redisstore.WithKeyPrefix(seed.KeyPrefix()))...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			stats0 := store.Stats()
			m := startMeter(b, c, rt, r)
			b.ResetTimer()
			err = runCallers(b.N, benchCallers, func(g, i int) error {
				_, err := store.SetQuantity(ctx, int64(g%100+1), benchQuantity(i))
				return err
			})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			reportTx(b, m, store.Stats(), stats0)
		})
	}
}

// benchReplicated starts a master with one replica (internal/redistest),
// waits until the replica streams, and returns the master.
func benchReplicated(b *testing.B) benchRedis {
	b.Helper()
	redistest.Require(b)
	master := redistest.StartNode(b, "bench-master")
	replica := redistest.StartNode(b, "bench-replica", "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	// Streaming, not just connected: until the master has the replica's
	// first acknowledgement after the initial sync (up to a second), WAIT
	// counts nothing from it.
	err := redistest.Poll(20*time.Second, func() error {
		if v, err := replica.Info("replication", "master_link_status"); err != nil || v != "up" {
			return fmt.Errorf("the replica's master_link_status is %q (%v)", v, err)
		}
		return nil
	})
	if err == nil {
		_, err = redistest.Replicated("bench-replication-marker", master, replica)
	}
	if err != nil {
		b.Fatal(err)
	}
	return benchRedis{url: "redis://" + master.Addr() + "/0", real: true}
}

// BenchmarkListReplicaAcks/{read-mostly,write-heavy}/{acks0,acks1}: the
// API's list of 100 pets on a master with one replica (loopback, no added
// delay), with the store without and with WithReplicaAcks(1, 500ms), under
// a read-mostly load (one update per 100 lists) and a write-heavy one (one
// per 2 lists). The updates are made outside the timer by a store without
// acknowledgements, so the list after one finds a change and, with acks,
// confirms it with WAIT; a list that finds nothing new costs no WAIT.
// Without redis-server it is skipped.
func BenchmarkListReplicaAcks(b *testing.B) {
	r := benchReplicated(b)
	for _, load := range []struct {
		name  string
		every int // one update before every that many lists
	}{{"read-mostly", 100}, {"write-heavy", 2}} {
		for _, acks := range []int{0, 1} {
			b.Run(fmt.Sprintf("%s/acks%d", load.name, acks), func(b *testing.B) {
				c, rt := r.client(b, 2)
				writer := newBenchStore(b, c, benchfix.Items(100))
				var opts []redisstore.Option
				if acks > 0 {
					opts = append(opts, redisstore.WithReplicaAcks(acks, 500*time.Millisecond))
				}
				store, err := redisstore.New(c, append(opts, redisstore.WithKeyPrefix(writer.KeyPrefix()))...)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				api := benchAPI(b, store)
				req := httptest.NewRequest(http.MethodGet, "/inventory", nil)
				req.Header.Set("Authorization", benchfix.Bearer)
				w := benchfix.NewWriter()
				api.ServeHTTP(w, req)
				if w.Status != http.StatusOK {
					b.Fatalf("setup: status %d, body %.100s", w.Status, w.Body)
				}
				stats0 := store.Stats()
				b.ReportAllocs()
				m := startMeter(b, c, rt, r)
				b.ResetTimer()
				for i := range b.N {
					if i%load.every == 0 {
						b.StopTimer()
						before := rt.n.Load()
						if _, err := writer.SetQuantity(ctx, 1, benchQuantity(i)); err != nil {
							b.Fatal(err)
						}
						m.rtts0 += rt.n.Load() - before
						b.StartTimer()
					}
					w.Reset()
					api.ServeHTTP(w, req)
					if w.Status != http.StatusOK {
						b.Fatalf("status %d: %s", w.Status, w.Body)
					}
				}
				b.StopTimer()
				m.report(b.N)
				if got := store.Stats().AckShortfalls - stats0.AckShortfalls; got != 0 {
					b.Fatalf("%d lists were not confirmed in time", got)
				}
			})
		}
	}
}

// TestRoundTrips checks that a list of an unchanged inventory and an
// update cost a constant number of round trips to Redis whatever the size
// of the inventory: the one and three the store's doc promises, for 10 and
// for 10 000 pets; and that a full read (Store.List) costs a number that
// grows with the inventory in chunks of about 1 000 (HSCAN), never one
// long command. The API's list is logged: it costs what ListChanges
// costs once the API lists through inventory.ChangeLister. Against a redis-server it also counts the
// commands Redis executed (INFO commandstats) and checks they are the
// same for both sizes; it logs both.
//
// The redis-server is one the test starts itself when redis-server is on
// PATH, so that no other client's commands are counted (go test runs
// packages in parallel, and others may share REDIS_URL); without one, it
// is the one at REDIS_URL, and the command counts are only logged.
func TestRoundTrips(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		testRoundTrips(t, benchRedis{url: "redis://" + m.Addr() + "/0"})
	})
	t.Run("redis-server", func(t *testing.T) {
		r, ok := privateRedis(t)
		if !ok {
			url := os.Getenv("REDIS_URL")
			if url == "" {
				t.Skip("neither redis-server on PATH nor REDIS_URL, so the count against a real redis-server is skipped; install redis-server, or `REDIS_URL=redis://127.0.0.1:6379/0 go test -run TestRoundTrips ./storage/redis`")
			}
			r = benchRedis{url: url, real: true, shared: true}
		}
		testRoundTrips(t, r)
	})
}

func testRoundTrips(t *testing.T, r benchRedis) {
	c, rt := r.client(t, 1)
	type op struct {
		name     string
		wantRTTs int64
		run      func(ctx context.Context) error
		rtts     map[int]int64
		cmds     map[int]map[string]int64
	}
	var (
		store  *redisstore.Store
		api    *inventory.API
		size   int
		cursor string
	)
	// wantRTTs: the round trips wanted, whatever the size; 0: logged, and
	// at most 3 plus one per 150 pets (HSCAN COUNT 300 returns about
	// 300 entries, and HSCAN may return fewer).
	ops := []*op{
		{name: "Store.ListChanges", wantRTTs: 1, run: func(ctx context.Context) error {
			ch, err := store.ListChanges(ctx, cursor)
			if err == nil && (ch.Full || len(ch.Log) != 0 || ch.Cursor != cursor) {
				err = fmt.Errorf("ListChanges of the current cursor = full %v, %d changes, cursor %q; want nothing changed", ch.Full, len(ch.Log), ch.Cursor)
			}
			return err
		}},
		{name: "Store.List", run: func(ctx context.Context) error {
			items, err := store.List(ctx)
			if err == nil && len(items) != size {
				err = fmt.Errorf("%d items, want %d", len(items), size)
			}
			return err
		}},
		{name: "Store.SetQuantity", wantRTTs: 2, run: func(ctx context.Context) error {
			_, err := store.SetQuantity(ctx, 7, 3)
			return err
		}},
		{name: "API list", wantRTTs: 1, run: func(ctx context.Context) error {
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/inventory", nil)
			req.Header.Set("Authorization", benchfix.Bearer)
			w := benchfix.NewWriter()
			api.ServeHTTP(w, req)
			if w.Status != http.StatusOK {
				return fmt.Errorf("status %d: %s", w.Status, w.Body)
			}
			return nil
		}},
		{name: "API update", wantRTTs: 2, run: func(context.Context) error {
			update := newAPICaller(api, 7)
			if st := update.patch([]byte(`{"quantity":4}`)); st != http.StatusOK {
				return fmt.Errorf("status %d: %s", st, update.w.Body)
			}
			return nil
		}},
	}
	sizes := []int{10, 10000}
	for _, n := range sizes {
		size = n
		store = newBenchStore(t, c, benchfix.Items(n))
		api = benchAPI(t, store)
		ch, err := store.ListChanges(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		cursor = ch.Cursor
		for _, o := range ops {
			if o.rtts == nil {
				o.rtts, o.cmds = make(map[int]int64), make(map[int]map[string]int64)
			}
			// The fewest of three tries: another client of the same
			// Redis can only add commands to the count.
			for try := range 3 {
				var before map[string]int64
				var err error
				if r.real {
					if before, err = commandCalls(t.Context(), c); err != nil {
						t.Fatal(err)
					}
				}
				rtts0 := rt.n.Load()
				if err := o.run(t.Context()); err != nil {
					t.Fatalf("%s with %d items: %v", o.name, n, err)
				}
				rtts := rt.n.Load() - rtts0
				if try == 0 || rtts < o.rtts[n] {
					o.rtts[n] = rtts
				}
				if r.real {
					after, err := commandCalls(t.Context(), c)
					if err != nil {
						t.Fatal(err)
					}
					d := commandDelta(before, after)
					if try == 0 || sum(d) < sum(o.cmds[n]) {
						o.cmds[n] = d
					}
				}
			}
		}
	}
	for _, o := range ops {
		for _, n := range sizes {
			line := fmt.Sprintf("%-18s items=%-6d round trips %d", o.name, n, o.rtts[n])
			if r.real {
				line += fmt.Sprintf(", commands %d (%s)", sum(o.cmds[n]), formatCalls(o.cmds[n]))
			}
			t.Log(line)
			if o.wantRTTs == 0 {
				if limit := int64(3 + n/150); o.rtts[n] > limit {
					t.Errorf("%s with %d items: %d round trips, want at most %d", o.name, n, o.rtts[n], limit)
				}
			} else if o.rtts[n] != o.wantRTTs {
				t.Errorf("%s with %d items: %d round trips, want %d", o.name, n, o.rtts[n], o.wantRTTs)
			}
		}
		if r.real && o.wantRTTs != 0 && formatCalls(o.cmds[sizes[0]]) != formatCalls(o.cmds[sizes[1]]) {
			report := t.Errorf
			if r.shared {
				report = t.Logf // other clients' commands may be in the count
			}
			report("%s: commands differ with the size of the inventory: %d items %s, %d items %s",
				o.name, sizes[0], formatCalls(o.cmds[sizes[0]]), sizes[1], formatCalls(o.cmds[sizes[1]]))
		}
	}
}
