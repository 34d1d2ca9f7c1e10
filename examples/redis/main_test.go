package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseConfig(t *testing.T) {
	cfg, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{addr: ":8080", framework: "gin", storeTimeout: 2 * time.Second, redisPrefix: "inventory", ackTimeout: 500 * time.Millisecond}
	if cfg != want {
		t.Errorf("defaults = %+v, want %+v", cfg, want)
	}

	vars := env(map[string]string{"ADDR": ":9000", "INVENTORY_FRAMEWORK": "fiber", "INVENTORY_STORE_TIMEOUT": "750ms",
		"REDIS_URL": "redis://r:6379/1", "INVENTORY_REDIS_PREFIX": "shop",
		"INVENTORY_REDIS_REPLICA_ACKS": "1", "INVENTORY_REDIS_REPLICA_ACK_TIMEOUT": "300ms",
		"INVENTORY_REDIS_CA_FILE": "ca.pem", "INVENTORY_REDIS_CERT_FILE": "c.pem", "INVENTORY_REDIS_KEY_FILE": "k.pem",
		"INVENTORY_REDIS_PASSWORD_FILE": "pw", "INVENTORY_REDIS_ALLOW_EVICTION": "1"})
	cfg, err = parseConfig(nil, vars, io.Discard)
	want = config{addr: ":9000", framework: "fiber", storeTimeout: 750 * time.Millisecond, redisURL: "redis://r:6379/1", redisPrefix: "shop",
		replicaAcks: 1, ackTimeout: 300 * time.Millisecond,
		caFile: "ca.pem", certFile: "c.pem", keyFile: "k.pem", passwordFile: "pw", allowEviction: true}
	if err != nil || cfg != want {
		t.Errorf("from the environment = %+v, %v; want %+v", cfg, err, want)
	}

	cfg, err = parseConfig([]string{"-addr", "127.0.0.1:1", "-framework", "gin", "-store-timeout", "3s", "-seed", "s.json", "-redis-prefix", "p2",
		"-replica-acks", "2", "-replica-ack-timeout", "1s"}, vars, io.Discard)
	want = config{addr: "127.0.0.1:1", framework: "gin", storeTimeout: 3 * time.Second, seedFile: "s.json", redisURL: "redis://r:6379/1", redisPrefix: "p2",
		replicaAcks: 2, ackTimeout: time.Second,
		caFile: "ca.pem", certFile: "c.pem", keyFile: "k.pem", passwordFile: "pw", allowEviction: true}
	if err != nil || cfg != want {
		t.Errorf("flags over the environment = %+v, %v; want %+v", cfg, err, want)
	}
	cfg, err = parseConfig([]string{"-redis-allow-eviction=false"}, vars, io.Discard)
	want = config{addr: ":9000", framework: "fiber", storeTimeout: 750 * time.Millisecond, redisURL: "redis://r:6379/1", redisPrefix: "shop",
		replicaAcks: 1, ackTimeout: 300 * time.Millisecond,
		caFile: "ca.pem", certFile: "c.pem", keyFile: "k.pem", passwordFile: "pw"}
	if err != nil || cfg != want {
		t.Errorf("flags over the environment = %+v, %v; want %+v", cfg, err, want)
	}

	for _, tc := range []struct {
		args []string
		env  map[string]string
		says string
	}{
		{[]string{"-framework", "echo"}, nil, `framework "echo"`},
		{nil, map[string]string{"INVENTORY_FRAMEWORK": "chi"}, `framework "chi"`},
		{nil, map[string]string{"INVENTORY_STORE_TIMEOUT": "2"}, "INVENTORY_STORE_TIMEOUT"},
		{[]string{"-store-timeout", "0s"}, nil, "must be positive"},
		{[]string{"-store-timeout", "-1s"}, nil, "must be positive"},
		{[]string{"serve"}, nil, `unexpected argument "serve"`},
		{[]string{"-nope"}, nil, "not defined"},
		{nil, map[string]string{"INVENTORY_REDIS_REPLICA_ACKS": "one"}, "INVENTORY_REDIS_REPLICA_ACKS"},
		{nil, map[string]string{"INVENTORY_REDIS_REPLICA_ACK_TIMEOUT": "5"}, "INVENTORY_REDIS_REPLICA_ACK_TIMEOUT"},
		{[]string{"-replica-acks", "-1"}, nil, "replica acks -1"},
		{[]string{"-replica-acks", "17"}, nil, "replica acks 17"},
		{[]string{"-replica-acks", "1", "-replica-ack-timeout", "0s"}, nil, "replica ack timeout 0s"},
		{[]string{"-replica-acks", "1", "-replica-ack-timeout", "2s"}, nil, "below the store timeout"},
		{nil, map[string]string{"INVENTORY_REDIS_ALLOW_EVICTION": "yes please"}, "INVENTORY_REDIS_ALLOW_EVICTION"},
		{nil, map[string]string{"INVENTORY_REDIS_CERT_FILE": "c.pem"}, "go together"},
		{nil, map[string]string{"INVENTORY_REDIS_KEY_FILE": "k.pem"}, "go together"},
	} {
		_, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("parseConfig(%q, %v) = %v, want an error saying %q", tc.args, tc.env, err, tc.says)
		}
	}
	var usage bytes.Buffer
	if _, err := parseConfig([]string{"-h"}, env(nil), &usage); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-redis-allow-eviction", "INVENTORY_REDIS_CA_FILE", "INVENTORY_REDIS_PASSWORD_FILE",
		"INVENTORY_API_KEYS_FILE", "Exit status: 0", "2 when the settings are wrong"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("-h does not say %q:\n%s", want, usage.String())
		}
	}
}

const testKey = "example-test-key"

// server is one run of the example in the test's process.
type server struct {
	base string
	done chan error
	stop context.CancelFunc
	logs *logBuffer
}

// logBuffer is a log the server writes while the test reads it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs the example with cfg (its address forced to a free loopback
// port) and returns once /readyz answers 200: seeded, and serving.
func start(t *testing.T, cfg config) *server {
	t.Helper()
	s := startUnready(t, cfg)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := s.do(t, http.MethodGet, "/readyz", "", "")
		if r.status == http.StatusOK {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers %d %s 30s after the start:\n%s", r.status, r.body, s.logs)
		}
	}
}

// startUnready runs the example with cfg (its address forced to a free
// loopback port) and returns once it accepts connections, ready or not.
func startUnready(t *testing.T, cfg config) *server {
	t.Helper()
	t.Setenv("INVENTORY_API_KEYS", testKey+",another-key")
	t.Setenv("INVENTORY_API_KEYS_FILE", "")
	return launch(t, cfg)
}

// launch is startUnready with the API keys the environment already names.
func launch(t *testing.T, cfg config) *server {
	t.Helper()
	cfg.addr = "127.0.0.1:0"
	if cfg.storeTimeout == 0 {
		cfg.storeTimeout = 2 * time.Second
	}
	if cfg.redisPrefix == "" {
		cfg.redisPrefix = "inventory"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{done: make(chan error, 1), stop: cancel, logs: &logBuffer{}}
	log := slog.New(slog.NewTextHandler(s.logs, nil))
	ready := make(chan string, 1)
	go func() { s.done <- run(ctx, cfg, log, io.Discard, func(addr string) { ready <- addr }) }()
	select {
	case addr := <-ready:
		s.base = "http://" + addr
	case err := <-s.done:
		cancel()
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the server did not start within 30s")
	}
	t.Cleanup(func() { s.shutdown(t) })
	return s
}

// shutdown stops the server as SIGTERM would and checks it ends cleanly.
func (s *server) shutdown(t *testing.T) {
	t.Helper()
	if s.stop == nil {
		return
	}
	s.stop()
	s.stop = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("run after shutdown = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the server did not shut down within 30s")
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func (s *server) do(t *testing.T, method, path, key, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (s *server) list(t *testing.T) []inventory.Item {
	t.Helper()
	r := s.do(t, http.MethodGet, "/v1/inventory", testKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/inventory = %d %s", r.status, r.body)
	}
	var items []inventory.Item
	if err := json.Unmarshal(r.body, &items); err != nil {
		t.Fatal(err)
	}
	return items
}

func (s *server) patch(t *testing.T, path, body string) response {
	t.Helper()
	return s.do(t, http.MethodPatch, path, testKey, body)
}

func TestServeEmbeddedRedis(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			s := start(t, config{framework: fw})
			if got := s.list(t); !slices.Equal(got, demo.Items()) {
				t.Fatalf("GET /v1/inventory = %+v, want the demo items", got)
			}
			if r := s.patch(t, "/v1/inventory/3", `{"quantity":40}`); r.status != http.StatusOK || string(r.body) != `{"petId":3,"quantity":40,"status":"pending"}` {
				t.Fatalf("PATCH = %d %s", r.status, r.body)
			}
			if r := s.patch(t, "/v1/inventory/999", `{"quantity":1}`); r.status != http.StatusNotFound {
				t.Fatalf("PATCH of an unknown pet = %d %s, want 404", r.status, r.body)
			}
			if r := s.do(t, http.MethodGet, "/v1/inventory", "", ""); r.status != http.StatusUnauthorized {
				t.Fatalf("GET without a key = %d, want 401", r.status)
			}
			if r := s.do(t, http.MethodGet, "/v1/inventory", "another-key", ""); r.status != http.StatusOK {
				t.Fatalf("GET with the second key = %d, want 200", r.status)
			}
			for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ready"}`} {
				r := s.do(t, http.MethodGet, path, "", "")
				if r.status != http.StatusOK || string(r.body) != want || r.header.Get("Content-Type") != "application/json" {
					t.Errorf("GET %s = %d %q (%s), want 200 %s", path, r.status, r.body, r.header.Get("Content-Type"), want)
				}
			}
			if r := s.do(t, http.MethodGet, "/openapi.yaml", "", ""); r.status != http.StatusOK || !bytes.Equal(r.body, inventory.OpenAPI()) {
				t.Errorf("GET /openapi.yaml = %d, %d bytes; want the document", r.status, len(r.body))
			}
			logs := s.logs.String()
			for _, want := range []string{"REDIS_URL is not set", "REDIS_URL=redis://", "msg=serving", "framework=" + fw, "store=\"embedded miniredis"} {
				if !strings.Contains(logs, want) {
					t.Errorf("the log does not say %q:\n%s", want, logs)
				}
			}
			if strings.Contains(logs, testKey) {
				t.Errorf("the log shows an API key:\n%s", logs)
			}
		})
	}
}

// sharedRedis returns the URL and a fresh key prefix on a Redis the two
// instances of a test share: the redis-server at REDIS_URL when set
// (keys removed afterwards), else a miniredis of the test's own.
func sharedRedis(t *testing.T) (url, prefix string) {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix = "example-test-" + hex.EncodeToString(b)
	url = os.Getenv("REDIS_URL")
	if url == "" {
		return "redis://" + miniredis.RunT(t).Addr() + "/0", prefix
	}
	t.Cleanup(func() {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return
		}
		c := redis.NewClient(opts)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, "{"+prefix+"}:*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return url, prefix
}

// TestTwoInstancesShareRedis: a Gin instance and a Fiber instance on one
// Redis see each other's writes at once, and the second does not seed
// over the first one's stock.
func TestTwoInstancesShareRedis(t *testing.T) {
	url, prefix := sharedRedis(t)
	a := start(t, config{framework: "gin", redisURL: url, redisPrefix: prefix})
	if r := a.patch(t, "/v1/inventory/1", `{"quantity":77}`); r.status != http.StatusOK {
		t.Fatalf("PATCH on gin = %d %s", r.status, r.body)
	}
	b := start(t, config{framework: "fiber", redisURL: url, redisPrefix: prefix})
	if got := b.list(t); got[0].Quantity != 77 {
		t.Fatalf("fiber sees pet 1 = %+v, want quantity 77 (seeding must not overwrite stock)", got[0])
	}
	if !strings.Contains(b.logs.String(), "already holds entries") {
		t.Errorf("the second instance does not log that it skipped seeding:\n%s", b.logs)
	}
	if r := b.patch(t, "/v1/inventory/2", `{"quantity":55}`); r.status != http.StatusOK {
		t.Fatalf("PATCH on fiber = %d %s", r.status, r.body)
	}
	if got := a.list(t); got[1].Quantity != 55 {
		t.Fatalf("gin sees pet 2 = %+v, want quantity 55", got[1])
	}
	// A restart of the first instance keeps the stock too.
	a.shutdown(t)
	a = start(t, config{framework: "gin", redisURL: url, redisPrefix: prefix})
	if got := a.list(t); got[0].Quantity != 77 || got[1].Quantity != 55 {
		t.Fatalf("after a restart: %+v, want pets 1 and 2 at 77 and 55", got[:2])
	}
}

func TestSeedFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(good, []byte(`[{"petId":-3,"quantity":1,"status":"sold"},{"petId":10,"quantity":2,"status":"pending"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, config{framework: "gin", seedFile: good})
	want := []inventory.Item{{PetID: -3, Quantity: 1, Status: inventory.StatusSold}, {PetID: 10, Quantity: 2, Status: inventory.StatusPending}}
	if got := s.list(t); !slices.Equal(got, want) {
		t.Fatalf("GET = %+v, want the seed file's %+v", got, want)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"petId":1,"quantity":-1,"status":"sold"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "missing.json")} {
		err := run(t.Context(), config{addr: "127.0.0.1:0", framework: "gin", seedFile: f, storeTimeout: time.Second, redisPrefix: "x"},
			slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, func(string) { t.Errorf("served with seed file %s", f) })
		if err == nil {
			t.Errorf("run with seed file %s = nil, want an error", f)
		}
	}
}

// TestRedisDownAtStart: with Redis not there yet, the server starts
// anyway: alive, not ready, the API 503 with Retry-After. Once Redis
// comes up, it seeds and serves without a restart.
func TestRedisDownAtStart(t *testing.T) {
	addr := portBelowEphemeral(t)
	s := startUnready(t, config{framework: "fiber", redisURL: "redis://" + addr + "/0", storeTimeout: 500 * time.Millisecond})
	if r := s.do(t, http.MethodGet, "/healthz", "", ""); r.status != http.StatusOK {
		t.Errorf("/healthz with Redis down = %d, want 200", r.status)
	}
	if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz with Redis down = %d, want 503", r.status)
	}
	r := s.do(t, http.MethodGet, "/v1/inventory", testKey, "")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"unavailable"`) {
		t.Fatalf("GET with Redis down = %d %s (Retry-After %q), want 503 unavailable", r.status, r.body, r.header.Get("Retry-After"))
	}

	m := miniredis.NewMiniRedis()
	if err := m.StartAddr(addr); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := s.do(t, http.MethodGet, "/v1/inventory", testKey, "")
		if r.status == http.StatusOK {
			if string(r.body) == "[]" {
				t.Fatal("GET answered [] before the seed was in")
			}
			break
		}
		if r.status != http.StatusOK && r.status != http.StatusServiceUnavailable {
			t.Fatalf("while Redis comes up: %d %s", r.status, r.body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not seeded and serving 60s after Redis came up: %d %s", r.status, r.body)
		}
	}
	if got := s.list(t); !slices.Equal(got, demo.Items()) {
		t.Fatalf("after Redis came up: %+v, want the demo items", got)
	}
	if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusOK {
		t.Errorf("/readyz with Redis up = %d, want 200", r.status)
	}
}

func TestInvalidRedisURL(t *testing.T) {
	t.Setenv("INVENTORY_API_KEYS", testKey)
	for url, says := range map[string]string{
		"redis://user:hunter2@127.0.0.1:badport/0":               "port",
		"redis://127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103/0": "separated by commas",
		"redis://127.0.0.1:7101?adr=127.0.0.1:7102":              "adr",
		"redis://127.0.0.1:26379?master_name=":                   "master_name is empty",
	} {
		err := run(t.Context(), config{addr: "127.0.0.1:0", framework: "gin", storeTimeout: time.Second, redisPrefix: "x", redisURL: url},
			slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, func(string) { t.Errorf("served with REDIS_URL=%s", url) })
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), says) || !strings.HasPrefix(err.Error(), "REDIS_URL: ") {
			t.Errorf("run with REDIS_URL=%s = %v, want an error about REDIS_URL saying %q, without the password", url, err, says)
		}
	}
}

// portBelowEphemeral returns a free loopback address whose port lies below
// the kernel's ephemeral range (32768 and up on Linux), so that while this
// test keeps it closed on purpose, no test running in parallel is handed it
// by a listen on port 0.
func portBelowEphemeral(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+mrand.IntN(10000))
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free port in 10000..19999")
	return ""
}

// TestTakenAddressRedisDown: on an address already taken, with Redis not
// answering, run returns the listen error at once (main then exits 1),
// instead of waiting forever on a seeding that nothing cancels.
func TestTakenAddressRedisDown(t *testing.T) {
	t.Setenv("INVENTORY_API_KEYS", testKey)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), config{addr: taken.Addr().String(), framework: "gin", storeTimeout: 500 * time.Millisecond,
			redisPrefix: "x", redisURL: "redis://" + portBelowEphemeral(t) + "/0", ackTimeout: 100 * time.Millisecond},
			slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, func(string) { t.Error("served on a taken address") })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("run on a taken address = %v, want the listen error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run on a taken address with Redis down did not return within 20s")
	}
}

// stalledRedis returns the address of a server that accepts connections
// and never answers, closed when the test ends.
func stalledRedis(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { _, _ = io.Copy(io.Discard, c); c.Close() })
		}
	}()
	return l.Addr().String()
}

// TestListensBeforeSeeding: with a Redis that never answers, the server
// listens first and tries to seed afterwards, instead of spending a seed
// attempt (seconds: the client's timeouts) before it even listens: when it
// accepts connections no seed attempt has failed yet, and the failed one
// is logged after "serving". Meanwhile it is alive and not ready, and it
// still shuts down promptly.
func TestListensBeforeSeeding(t *testing.T) {
	s := startUnready(t, config{framework: "gin", redisURL: "redis://" + stalledRedis(t) + "/0", storeTimeout: time.Minute})
	if logs := s.logs.String(); strings.Contains(logs, "cannot serve yet") {
		t.Fatalf("a seed attempt failed before the server listened:\n%s", logs)
	}
	if r := s.do(t, http.MethodGet, "/healthz", "", ""); r.status != http.StatusOK {
		t.Errorf("/healthz while seeding = %d, want 200", r.status)
	}
	if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusServiceUnavailable ||
		string(r.body) != `{"status":"unavailable","message":"the inventory store cannot serve: Redis cannot be reached, timed out, or refuses work for now"}` {
		t.Errorf("/readyz while seeding = %d %s, want 503 cannot serve", r.status, r.body)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		logs := s.logs.String()
		if i := strings.Index(logs, "the store cannot serve yet"); i >= 0 {
			if j := strings.Index(logs, "msg=serving"); j < 0 || j > i {
				t.Fatalf("the failed seed attempt is logged before \"serving\":\n%s", logs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed seed attempt logged within 30s against a Redis that never answers:\n%s", logs)
		}
	}
}

// TestReadyzWaitsForSeed: /readyz is 503 until the seed is in, even when
// the store could serve; then 200.
func TestReadyzWaitsForSeed(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()
	store, err := redisstore.New(c, redisstore.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	p := probes{store: store, timeout: time.Second, log: slog.New(slog.NewTextHandler(io.Discard, nil)), seeded: new(atomic.Bool), state: new(readiness)}
	if status, _, body := p.readyz(t.Context()); status != http.StatusServiceUnavailable || !strings.Contains(string(body), "not seeded") {
		t.Errorf("/readyz before the seed = %d %s, want 503 not seeded", status, body)
	}
	p.seeded.Store(true)
	if status, _, body := p.readyz(t.Context()); status != http.StatusOK {
		t.Errorf("/readyz after the seed = %d %s, want 200", status, body)
	}
	m.SetError("MOVED 866 127.0.0.1:7001")
	if status, _, body := p.readyz(t.Context()); status != http.StatusServiceUnavailable || !strings.Contains(string(body), "name the Cluster instead: REDIS_URL=redis://host:port?cluster=true") {
		t.Errorf("/readyz on a Cluster node reached as one node = %d %s, want 503", status, body)
	}
}

// TestStartupLogNamesTopology: the startup log line names the topology
// and address of REDIS_URL, never its password.
func TestStartupLogNamesTopology(t *testing.T) {
	m := miniredis.RunT(t)
	m.RequireAuth("hunter2")
	s := start(t, config{framework: "gin", redisURL: "redis://:hunter2@" + m.Addr() + "/0"})
	logs := s.logs.String()
	if want := `store="redis single node ` + m.Addr() + `, db 0"`; !strings.Contains(logs, want) {
		t.Errorf("the log does not say %s:\n%s", want, logs)
	}
	if strings.Contains(logs, "hunter2") {
		t.Errorf("the log shows the Redis password:\n%s", logs)
	}
}
