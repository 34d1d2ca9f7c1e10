package server

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
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParse(t *testing.T) {
	parse := func(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
		return Parse("redis", args, getenv, usage)
	}
	cfg, err := parse(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Addr: ":8080", Framework: "gin", StoreTimeout: 2 * time.Second, RedisPrefix: "inventory", ReplicaAckTimeout: 500 * time.Millisecond}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("defaults = %+v, want %+v", cfg, want)
	}
	if got := (Config{}).withDefaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("Config{}.withDefaults() = %+v, want the defaults of Parse, %+v", got, want)
	}

	vars := env(map[string]string{"ADDR": ":9000", "INVENTORY_FRAMEWORK": "fiber", "INVENTORY_STORE_TIMEOUT": "750ms",
		"REDIS_URL": "redis://r:6379/1", "INVENTORY_REDIS_PREFIX": "shop",
		"INVENTORY_REDIS_REPLICA_ACKS": "1", "INVENTORY_REDIS_REPLICA_ACK_TIMEOUT": "300ms",
		"INVENTORY_REDIS_CA_FILE": "ca.pem", "INVENTORY_REDIS_CERT_FILE": "c.pem", "INVENTORY_REDIS_KEY_FILE": "k.pem",
		"INVENTORY_REDIS_PASSWORD_FILE": "pw", "INVENTORY_REDIS_ALLOW_EVICTION": "1",
		"INVENTORY_API_KEYS": " k1, ,k2 ", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://otel:4318/t"})
	cfg, err = parse(nil, vars, io.Discard)
	want = Config{Addr: ":9000", Framework: "fiber", StoreTimeout: 750 * time.Millisecond, RedisURL: "redis://r:6379/1", RedisPrefix: "shop",
		ReplicaAcks: 1, ReplicaAckTimeout: 300 * time.Millisecond,
		RedisCAFile: "ca.pem", RedisCertFile: "c.pem", RedisKeyFile: "k.pem", RedisPasswordFile: "pw", AllowEviction: true,
		APIKeys: []string{"k1", "k2"}, OTLPEndpoint: "http://otel:4318", OTLPTracesEndpoint: "http://otel:4318/t"}
	if err != nil || !reflect.DeepEqual(cfg, want) {
		t.Errorf("from the environment = %+v, %v; want %+v", cfg, err, want)
	}

	cfg, err = parse([]string{"-addr", "127.0.0.1:1", "-framework", "gin", "-store-timeout", "3s", "-seed", "s.json", "-redis-prefix", "p2",
		"-replica-acks", "2", "-replica-ack-timeout", "1s"}, vars, io.Discard)
	want.Addr, want.Framework, want.StoreTimeout, want.Seed, want.RedisPrefix, want.ReplicaAcks, want.ReplicaAckTimeout =
		"127.0.0.1:1", "gin", 3*time.Second, "s.json", "p2", 2, time.Second
	if err != nil || !reflect.DeepEqual(cfg, want) {
		t.Errorf("flags over the environment = %+v, %v; want %+v", cfg, err, want)
	}
	cfg, err = parse([]string{"-redis-allow-eviction=false"}, vars, io.Discard)
	if err != nil || cfg.AllowEviction {
		t.Errorf("-redis-allow-eviction=false over INVENTORY_REDIS_ALLOW_EVICTION=1 = %v, %v; want false", cfg.AllowEviction, err)
	}
	cfg, err = parse([]string{"-redis-allow-eviction"}, env(nil), io.Discard)
	if err != nil || !cfg.AllowEviction {
		t.Errorf("-redis-allow-eviction alone = %v, %v; want true", cfg.AllowEviction, err)
	}
	cfg, err = parse([]string{"-init-only", "-seed", "empty"}, env(nil), io.Discard)
	if err != nil || !cfg.InitOnly || cfg.Seed != SeedEmpty {
		t.Errorf("-init-only -seed empty = %v %q, %v; want InitOnly and the seed", cfg.InitOnly, cfg.Seed, err)
	}
	cfg, err = parse(nil, env(map[string]string{"INVENTORY_INIT_ONLY": "true", "INVENTORY_SEED": "demo"}), io.Discard)
	if err != nil || !cfg.InitOnly {
		t.Errorf("INVENTORY_INIT_ONLY=true = %v, %v; want InitOnly", cfg.InitOnly, err)
	}

	for _, tc := range []struct {
		args []string
		env  map[string]string
		says string
	}{
		{[]string{"-framework", "echo"}, nil, `framework "echo"`},
		{nil, map[string]string{"INVENTORY_FRAMEWORK": "chi"}, `framework "chi"`},
		{nil, map[string]string{"INVENTORY_STORE_TIMEOUT": "2"}, "INVENTORY_STORE_TIMEOUT"},
		{[]string{"-store-timeout", "2"}, nil, "-store-timeout"},
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
		{nil, map[string]string{"INVENTORY_API_KEYS": " , "}, "INVENTORY_API_KEYS: holds no key"},
		{nil, map[string]string{"INVENTORY_API_KEYS": "k", "INVENTORY_API_KEYS_FILE": "keys"}, "set one"},
		{[]string{"-init-only"}, nil, "add -seed FILE"},
		{nil, map[string]string{"INVENTORY_INIT_ONLY": "true"}, "add -seed FILE"},
		{nil, map[string]string{"INVENTORY_INIT_ONLY": "maybe"}, "INVENTORY_INIT_ONLY"},
	} {
		_, err := parse(tc.args, env(tc.env), io.Discard)
		var ce ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%q, %v) = %v, want a ConfigError saying %q", tc.args, tc.env, err, tc.says)
		}
	}
	if _, err := parse([]string{"-version"}, env(nil), io.Discard); !errors.Is(err, ErrVersion) {
		t.Errorf("-version = %v, want ErrVersion", err)
	}
	var usage bytes.Buffer
	if _, err := parse([]string{"-h"}, env(nil), &usage); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-redis-allow-eviction", "INVENTORY_REDIS_CA_FILE", "INVENTORY_REDIS_PASSWORD_FILE",
		"INVENTORY_API_KEYS_FILE", "Exit status: 0", "2 when the settings are wrong", "-version", "openssl rand -hex 32",
		"A store is served only once initialized", "INVENTORY_METRICS_ADDR", "-init-only -seed FILE does that and exits", "-init-only without -seed"} {
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
	logs *proctest.Buffer
}

// start runs the example with cfg (its address forced to a free loopback
// port) and returns once /readyz answers 200: seeded, and serving.
func start(t *testing.T, cfg Config) *server {
	t.Helper()
	s := startUnready(t, cfg)
	waitServerReady(t, s)
	return s
}

// waitServerReady waits until s's /readyz answers 200.
func waitServerReady(t *testing.T, s *server) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := s.do(t, http.MethodGet, "/readyz", "", "")
		if r.status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers %d %s 30s after the start:\n%s", r.status, r.body, s.logs)
		}
	}
}

// startUnready runs the server with cfg (its address forced to a free
// loopback port; the demo inventory as its seed unless cfg names one) and
// returns once it accepts connections, ready or not.
func startUnready(t *testing.T, cfg Config) *server {
	t.Helper()
	cfg.APIKeys = []string{testKey, "another-key"}
	if cfg.Seed == "" {
		cfg.Seed = "demo"
	}
	return launch(t, cfg)
}

// launch runs the server with cfg as it is (its keys, its seed), on a
// redis-server of the test's own when cfg names no Redis.
func launch(t *testing.T, cfg Config) *server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.RedisURL == "" {
		cfg.RedisURL = "redis://" + newRedis(t).Addr() + "/0"
	}
	if cfg.StoreTimeout == 0 {
		cfg.StoreTimeout = 2 * time.Second
	}
	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = "inventory"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{done: make(chan error, 1), stop: cancel, logs: &proctest.Buffer{}}
	log := slog.New(slog.NewTextHandler(s.logs, nil))
	ready := make(chan string, 1)
	go func() { s.done <- run(ctx, cfg, log, func(addr string) { ready <- addr }) }()
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

// newRedis starts a redis-server of the test's own, with args as its
// settings; it is killed when the test ends.
func newRedis(t *testing.T, args ...string) *redistest.Node {
	t.Helper()
	return redistest.StartNode(t, "redis-"+t.Name(), args...)
}

// requirePass makes n ask clients for password.
func requirePass(t *testing.T, n *redistest.Node, password string) {
	t.Helper()
	if _, err := n.Do("CONFIG", "SET", "requirepass", password); err != nil {
		t.Fatal(err)
	}
}

func TestServe(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			s := start(t, Config{Framework: fw})
			if got := s.list(t); !slices.Equal(got, DemoInventory()) {
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
			for _, want := range []string{"msg=serving", "framework=" + fw, "store=\"redis single node"} {
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
// (keys removed afterwards), else a redis-server of the test's own.
func sharedRedis(t *testing.T) (url, prefix string) {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix = "example-test-" + hex.EncodeToString(b)
	url = os.Getenv("REDIS_URL")
	if url == "" {
		return "redis://" + newRedis(t).Addr() + "/0", prefix
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
	a := start(t, Config{Framework: "gin", RedisURL: url, RedisPrefix: prefix})
	if r := a.patch(t, "/v1/inventory/1", `{"quantity":77}`); r.status != http.StatusOK {
		t.Fatalf("PATCH on gin = %d %s", r.status, r.body)
	}
	b := start(t, Config{Framework: "fiber", RedisURL: url, RedisPrefix: prefix})
	if got := b.list(t); got[0].Quantity != 77 {
		t.Fatalf("fiber sees pet 1 = %+v, want quantity 77 (seeding must not overwrite stock)", got[0])
	}
	if !strings.Contains(b.logs.String(), "already initialized: not seeding") {
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
	a = start(t, Config{Framework: "gin", RedisURL: url, RedisPrefix: prefix})
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
	s := start(t, Config{Framework: "gin", Seed: good})
	want := []inventory.Item{{PetID: -3, Quantity: 1, Status: inventory.StatusSold}, {PetID: 10, Quantity: 2, Status: inventory.StatusPending}}
	if got := s.list(t); !slices.Equal(got, want) {
		t.Fatalf("GET = %+v, want the seed file's %+v", got, want)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"petId":1,"quantity":-1,"status":"sold"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "missing.json")} {
		err := run(t.Context(), Config{Addr: "127.0.0.1:0", Framework: "gin", Seed: f, StoreTimeout: time.Second, RedisPrefix: "x",
			RedisURL: "redis://127.0.0.1:1/0", APIKeys: []string{testKey}},
			slog.New(slog.NewTextHandler(io.Discard, nil)), func(string) { t.Errorf("served with seed file %s", f) })
		var ce ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), f) {
			t.Errorf("run with seed file %s = %v, want a ConfigError naming the file", f, err)
		}
	}
}

// TestRedisDownAtStart: with Redis not there yet, the server starts
// anyway: alive, not ready, the API 503 with Retry-After. Once Redis
// comes up, it seeds and serves without a restart.
func TestRedisDownAtStart(t *testing.T) {
	down := newRedis(t)
	down.Kill()
	s := startUnready(t, Config{Framework: "fiber", RedisURL: "redis://" + down.Addr() + "/0", StoreTimeout: 500 * time.Millisecond})
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

	down.Restart()
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
	if got := s.list(t); !slices.Equal(got, DemoInventory()) {
		t.Fatalf("after Redis came up: %+v, want the demo items", got)
	}
	if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusOK {
		t.Errorf("/readyz with Redis up = %d, want 200", r.status)
	}
}

func TestInvalidRedisURL(t *testing.T) {
	for url, says := range map[string]string{
		"redis://user:hunter2@127.0.0.1:badport/0":               "port",
		"redis://127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103/0": "separated by commas",
		"redis://127.0.0.1:7101?adr=127.0.0.1:7102":              "adr",
		"redis://127.0.0.1:26379?master_name=":                   "master_name is empty",
	} {
		err := run(t.Context(), Config{Addr: "127.0.0.1:0", Framework: "gin", StoreTimeout: time.Second, RedisPrefix: "x", RedisURL: url, APIKeys: []string{testKey}},
			slog.New(slog.NewTextHandler(io.Discard, nil)), func(string) { t.Errorf("served with REDIS_URL=%s", url) })
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
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), Config{Addr: taken.Addr().String(), Framework: "gin", StoreTimeout: 500 * time.Millisecond,
			RedisPrefix: "x", RedisURL: "redis://" + portBelowEphemeral(t) + "/0", ReplicaAckTimeout: 100 * time.Millisecond, APIKeys: []string{testKey}},
			slog.New(slog.NewTextHandler(io.Discard, nil)), func(string) { t.Error("served on a taken address") })
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
	s := startUnready(t, Config{Framework: "gin", RedisURL: "redis://" + stalledRedis(t) + "/0?read_timeout=300ms&write_timeout=300ms", StoreTimeout: time.Minute})
	if logs := s.logs.String(); strings.Contains(logs, "cannot serve yet") {
		t.Fatalf("a seed attempt failed before the server listened:\n%s", logs)
	}
	if r := s.do(t, http.MethodGet, "/healthz", "", ""); r.status != http.StatusOK {
		t.Errorf("/healthz while seeding = %d, want 200", r.status)
	}
	// Before the first try fails, /readyz says the store is being
	// initialized; after, what the try met.
	if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusServiceUnavailable ||
		string(r.body) != `{"status":"unavailable","message":"the inventory store is being initialized (-seed)"}` &&
			string(r.body) != `{"status":"unavailable","message":"the inventory store cannot serve: Redis cannot be reached, timed out, or refuses work for now"}` {
		t.Errorf("/readyz while seeding = %d %s, want 503 being initialized", r.status, r.body)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		logs := s.logs.String()
		if i := strings.Index(logs, "the store cannot serve yet"); i >= 0 {
			if j := strings.Index(logs, "msg=serving"); j < 0 || j > i {
				t.Fatalf("the failed seed attempt is logged before \"serving\":\n%s", logs)
			}
			// What the failed try met is what /readyz says now.
			if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusServiceUnavailable ||
				string(r.body) != `{"status":"unavailable","message":"the inventory store cannot serve: Redis cannot be reached, timed out, or refuses work for now"}` {
				t.Errorf("/readyz after a failed seed attempt = %d %s, want 503 cannot serve", r.status, r.body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed seed attempt logged within 30s against a Redis that never answers:\n%s", logs)
		}
	}
}

// TestReadyzWaitsForSeed: /readyz is 503 until the seed is in, even when
// the store could serve; then 200. (A store that cannot serve, such as a
// Cluster node reached as one node, is server/internal/managed's.)
func TestReadyzWaitsForSeed(t *testing.T) {
	m := newRedis(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()
	store, err := redisstore.New(c, redisstore.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	p := probes{store: store, timeout: time.Second, log: slog.New(slog.NewTextHandler(io.Discard, nil)), boot: new(bootState), state: new(readiness)}
	if status, _, body := p.readyz(t.Context()); status != http.StatusServiceUnavailable || !strings.Contains(string(body), "not seeded") {
		t.Errorf("/readyz before the seed = %d %s, want 503 not seeded", status, body)
	}
	p.boot.seeded.Store(true)
	if status, _, body := p.readyz(t.Context()); status != http.StatusOK {
		t.Errorf("/readyz after the seed = %d %s, want 200", status, body)
	}
}

// TestStartupLogNamesTopology: the startup log line names the topology
// and address of REDIS_URL, never its password.
func TestStartupLogNamesTopology(t *testing.T) {
	m := newRedis(t)
	requirePass(t, m, "hunter2")
	s := start(t, Config{Framework: "gin", RedisURL: "redis://:hunter2@" + m.Addr() + "/0"})
	logs := s.logs.String()
	if want := `store="redis single node ` + m.Addr() + `, db 0"`; !strings.Contains(logs, want) {
		t.Errorf("the log does not say %s:\n%s", want, logs)
	}
	if strings.Contains(logs, "hunter2") {
		t.Errorf("the log shows the Redis password:\n%s", logs)
	}
}
