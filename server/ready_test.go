package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
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

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

// TestNotReadyIs503: while the store is not ready (here: Redis asks for a
// password REDIS_URL does not give), every /v1 call is 503 unavailable
// with Retry-After (never [] nor 404 for a pet the seed would write), and
// /readyz is 503; once Redis lets the client in, the seed goes in and
// the server serves, without a restart.
func TestNotReadyIs503(t *testing.T) {
	m := newRedis(t)
	requirePass(t, m, "s3cret")
	s := startUnready(t, Config{Framework: "gin", RedisURL: "redis://" + m.Addr() + "/0", StoreTimeout: time.Second})
	for range 5 {
		for _, r := range []response{
			s.do(t, http.MethodGet, "/v1/inventory", testKey, ""),
			s.patch(t, "/v1/inventory/1", `{"quantity":3}`),
		} {
			if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"unavailable"`) {
				t.Fatalf("/v1 while not ready = %d %s (Retry-After %q), want 503 unavailable", r.status, r.body, r.header.Get("Retry-After"))
			}
		}
		if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), `"unavailable"`) {
			t.Fatalf("/readyz while not ready = %d %s, want 503", r.status, r.body)
		}
	}
	if r := s.do(t, http.MethodGet, "/v1/inventory", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("GET without a key while not ready = %d, want 401: authentication comes first", r.status)
	}
	// The operator lets the client in.
	admin := redis.NewClient(&redis.Options{Addr: m.Addr(), Password: "s3cret"})
	defer admin.Close()
	if err := admin.ConfigSet(t.Context(), "requirepass", "").Err(); err != nil {
		t.Fatal(err)
	}
	awaitReady(t, s, 20*time.Second)
	if got := s.list(t); !slices.Equal(got, DemoInventory()) {
		t.Fatalf("after recovery: %+v, want the demo items", got)
	}
	if n := strings.Count(s.logs.String(), "msg=\"not ready\""); n != 1 {
		t.Errorf("\"not ready\" logged %d times, want once:\n%s", n, s.logs)
	}
	if !strings.Contains(s.logs.String(), "ready again") {
		t.Errorf("the return to readiness is not logged:\n%s", s.logs)
	}
}

// awaitReady waits until /readyz answers 200.
func awaitReady(t *testing.T, s *server, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		r := s.do(t, http.MethodGet, "/readyz", "", "")
		if r.status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %s after %v:\n%s", r.status, r.body, within, s.logs)
		}
	}
}

// TestEmptySeed: a seed file holding [] initializes an empty inventory,
// served, and the log says the store was initialized with no item, not
// that it was initialized already.
func TestEmptySeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(path, []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{Framework: "fiber", Seed: path})
	if r := s.do(t, http.MethodGet, "/v1/inventory", testKey, ""); r.status != http.StatusOK || string(r.body) != "[]" {
		t.Fatalf("GET = %d %s, want 200 []", r.status, r.body)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, `msg="initialized the store (-seed)"`) || !strings.Contains(logs, "items=0") || strings.Contains(logs, "already initialized") {
		t.Errorf("the log about an empty seed is not the truth:\n%s", logs)
	}
}

// TestConfigErrors: every error of the settings run meets before serving
// is a ConfigError (main exits 2, as for a bad flag); a taken address is
// not.
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"petId":1,"quantity":1,"status":"sold"},{"petId":20,"quantity":-1,"status":"sold"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "keys")
	if err := os.WriteFile(empty, []byte("# no key yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	const url = "redis://127.0.0.1:6379/0" // never reached: each fault is found before
	for _, tc := range []struct {
		name  string
		cfg   Config
		says  string
		noKey bool // run without an API key
	}{
		{"no REDIS_URL", Config{}, "REDIS_URL is required", false},
		{"no API key", Config{RedisURL: url}, "no API key: set INVENTORY_API_KEYS (comma-separated keys) or INVENTORY_API_KEYS_FILE", true},
		{"no key says how to make one", Config{RedisURL: url}, "openssl rand -hex 32", true},
		{"neither REDIS_URL nor a key", Config{}, "REDIS_URL is required: the Redis to serve from (redis://host:6379/0; a Cluster or Sentinel URL); " +
			"to try the server without one, `go run ./examples/redis` in the repository starts an embedded Redis\nno API key", true},
		{"bad URL", Config{RedisURL: "redis://127.0.0.1:6379?master-name=x"}, "master-name", false},
		{"missing seed file", Config{RedisURL: url, Seed: filepath.Join(dir, "missing.json")}, "missing.json", false},
		{"bad seed file", Config{RedisURL: url, Seed: bad}, "element 2 of the array (pet id 20)", false},
		{"key file without a key", Config{RedisURL: url, APIKeysFile: empty}, "holds no key", false},
		{"missing key file", Config{RedisURL: url, APIKeysFile: filepath.Join(dir, "nokeys")}, "nokeys", false},
		{"bad key", Config{RedisURL: url, APIKeys: []string{"a\x01b"}}, "API key #1", false},
		{"keys and a key file", Config{RedisURL: url, APIKeys: []string{testKey}, APIKeysFile: empty}, "set one", false},
		{"bad prefix", Config{RedisURL: url, RedisPrefix: "a}b"}, "prefix", false},
		{"bad framework", Config{RedisURL: url, Framework: "echo"}, `framework "echo"`, false},
		{"missing password file", Config{RedisURL: url, RedisPasswordFile: filepath.Join(dir, "nopw")}, "INVENTORY_REDIS_PASSWORD_FILE: redisstore: password file", false},
		{"missing CA file", Config{RedisURL: url, RedisCAFile: filepath.Join(dir, "noca")}, "INVENTORY_REDIS_CA_FILE, _CERT_FILE, _KEY_FILE: redisstore: LoadTLSFiles: CA file", false},
		{"key file without a certificate", Config{RedisURL: url, RedisKeyFile: filepath.Join(dir, "key"), RedisCertFile: filepath.Join(dir, "nocert")}, "INVENTORY_REDIS_CA_FILE, _CERT_FILE, _KEY_FILE", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Addr, cfg.StoreTimeout = "127.0.0.1:0", time.Second
			if cfg.RedisPrefix == "" {
				cfg.RedisPrefix = "x"
			}
			if cfg.APIKeys == nil && cfg.APIKeysFile == "" && !tc.noKey {
				cfg.APIKeys = []string{testKey}
			}
			err := run(t.Context(), cfg, quiet, func(string) { t.Error("served") })
			var ce ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("run = %v, want a ConfigError saying %q", err, tc.says)
			}
		})
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = run(t.Context(), Config{Addr: taken.Addr().String(), RedisURL: url, APIKeys: []string{testKey}}, quiet, nil)
	var ce ConfigError
	if err == nil || errors.As(err, &ce) {
		t.Errorf("run on a taken address = %v, want an error that is not a ConfigError (exit 1)", err)
	}
}

// keyDir is a Kubernetes-style mounted secret: keys is a link to
// ..data/keys, and ..data a link to the current version's directory,
// which an update replaces in one rename.
type keyDir struct {
	t       *testing.T
	dir     string
	version int
}

func newKeyDir(t *testing.T, content string) *keyDir {
	d := &keyDir{t: t, dir: t.TempDir()}
	d.flip(content)
	if err := os.Symlink(filepath.Join("..data", "keys"), d.path()); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *keyDir) path() string { return filepath.Join(d.dir, "keys") }

// flip writes a new version holding content (no keys file at all when
// content is "-") and switches ..data to it atomically.
func (d *keyDir) flip(content string) {
	d.t.Helper()
	d.version++
	v := fmt.Sprintf("..v%d", d.version)
	if err := os.Mkdir(filepath.Join(d.dir, v), 0o700); err != nil {
		d.t.Fatal(err)
	}
	if content != "-" {
		if err := os.WriteFile(filepath.Join(d.dir, v, "keys"), []byte(content), 0o600); err != nil {
			d.t.Fatal(err)
		}
	}
	tmp := filepath.Join(d.dir, "..data_tmp")
	if err := os.Symlink(v, tmp); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(d.dir, "..data")); err != nil {
		d.t.Fatal(err)
	}
}

// TestAPIKeysFileRotation: INVENTORY_API_KEYS_FILE replaced the way
// Kubernetes replaces a mounted secret. Under a burst of requests with
// the retired key, a key kept across the rotation and the new key, the
// only non-200 answers are the intended 401s: the retired key refused
// within seconds, and then always; the new key accepted, and then always;
// the kept key never refused. A new content without a key, or no file at
// all, keeps the keys in force and is logged once.
func TestAPIKeysFileRotation(t *testing.T) {
	t.Parallel() // it waits on the server's clocks, not the CPU
	d := newKeyDir(t, "# v1\nold-key-1111\nkept-key-2222\n")
	s := launch(t, Config{Framework: "gin", APIKeysFile: d.path(), Seed: SeedDemo})
	awaitReady(t, s, 20*time.Second)

	type sample struct {
		at     time.Time
		status int
	}
	keys := []string{"old-key-1111", "kept-key-2222", "new-key-3333"}
	samples := make([][]sample, len(keys))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64 // requests of the burst answered so far
	client := &http.Client{Timeout: 10 * time.Second}
	for i, key := range keys {
		for range 2 {
			var mine []sample
			wg.Go(func() {
				for {
					select {
					case <-stop:
						appendSamples(&samples[i], mine)
						return
					default:
					}
					req, _ := http.NewRequest(http.MethodGet, s.base+"/v1/inventory", nil)
					req.Header.Set("Authorization", "Bearer "+key)
					at := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						t.Errorf("GET with %s: %v", key, err)
						appendSamples(&samples[i], mine)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					mine = append(mine, sample{at, resp.StatusCode})
					answered.Add(1)
				}
			})
		}
	}
	// Rotate while the burst runs: the kept key stays, the old one goes.
	flipped := time.Now()
	d.flip("new-key-3333\nkept-key-2222\n")
	refused := time.Time{}
	for deadline := time.Now().Add(10 * time.Second); refused.IsZero(); time.Sleep(10 * time.Millisecond) {
		if r := s.do(t, http.MethodGet, "/v1/inventory", "old-key-1111", ""); r.status == http.StatusUnauthorized {
			refused = time.Now()
		} else if time.Now().After(deadline) {
			t.Fatalf("the retired key is still %d 10s after the rotation:\n%s", r.status, s.logs)
		}
	}
	// Let the burst send a hundred more requests with the new keys.
	for after := answered.Load() + 100; answered.Load() < after; time.Sleep(5 * time.Millisecond) {
	}
	close(stop)
	wg.Wait()
	// How soon depends on keyFileInterval and on how busy the machine is:
	// printed, not asserted (the 10 s above only bounds the wait).
	t.Logf("the retired key was refused %v after the rotation", refused.Sub(flipped).Round(time.Millisecond))
	for i, key := range keys {
		ss := samples[i]
		slices.SortFunc(ss, func(a, b sample) int { return a.at.Compare(b.at) })
		n200, n401 := 0, 0
		for _, sm := range ss {
			switch sm.status {
			case http.StatusOK:
				n200++
			case http.StatusUnauthorized:
				n401++
			default:
				t.Fatalf("%s: answer %d during the rotation", key, sm.status)
			}
			switch {
			case key == "kept-key-2222" && sm.status != http.StatusOK:
				t.Fatalf("the kept key was refused (%d) at %v", sm.status, sm.at.Sub(flipped))
			case key == "old-key-1111" && sm.status == http.StatusOK && sm.at.After(refused):
				t.Fatalf("the retired key was accepted again %v after it was refused", sm.at.Sub(refused))
			case key == "old-key-1111" && sm.status == http.StatusUnauthorized && sm.at.Before(flipped):
				t.Fatalf("the retired key was refused before the rotation")
			case key == "new-key-3333" && sm.status == http.StatusOK && sm.at.Before(flipped):
				t.Fatalf("the new key was accepted before the rotation")
			case key == "new-key-3333" && sm.status == http.StatusUnauthorized && sm.at.After(refused):
				t.Fatalf("the new key was refused %v after the retired one was", sm.at.Sub(refused))
			}
		}
		t.Logf("%s: %d × 200, %d × 401", key, n200, n401)
		if key != "kept-key-2222" && (n200 == 0 || n401 == 0) {
			t.Errorf("%s: %d × 200 and %d × 401, want both", key, n200, n401)
		}
	}

	// A new version without a key, then none at all: the keys in force
	// stay, and each is logged once, however many times it is read.
	for _, bad := range []struct{ content, says string }{{"# nothing\n\n", "holds no key"}, {"-", "no such file"}} {
		before := strings.Count(s.logs.String(), "level=ERROR")
		d.flip(bad.content)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.logs.String(), bad.says); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("a key file that %s is not logged within 10s:\n%s", bad.says, s.logs)
			}
		}
		// Several more reads of the bad version: the keys in force keep
		// working all along.
		for seen := time.Now(); time.Since(seen) < 3*keyFileInterval; time.Sleep(50 * time.Millisecond) {
			if r := s.do(t, http.MethodGet, "/v1/inventory", "new-key-3333", ""); r.status != http.StatusOK {
				t.Fatalf("with a key file that %s, the key in force = %d, want 200", bad.says, r.status)
			}
		}
		if n := strings.Count(s.logs.String(), "level=ERROR") - before; n != 1 {
			t.Errorf("a key file that %s: %d ERROR lines, want 1:\n%s", bad.says, n, s.logs)
		}
	}
	d.flip("newest-key-4444\n")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r := s.do(t, http.MethodGet, "/v1/inventory", "newest-key-4444", ""); r.status == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the key of a good file after bad ones is %d 10s later:\n%s", r.status, s.logs)
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, "old-key-1111") || strings.Contains(logs, "new-key-3333") || strings.Count(logs, "API keys reloaded") < 2 {
		t.Errorf("the log shows a key, or not each reload:\n%s", logs)
	}
}

var samplesMu sync.Mutex

func appendSamples[T any](dst *[]T, src []T) {
	samplesMu.Lock()
	defer samplesMu.Unlock()
	*dst = append(*dst, src...)
}

// TestSeedAnnouncedOnce: while the store cannot serve (here an ACL user
// without XADD, on a store another user seeded), the seed is retried, and
// what it found is logged once, not on every retry.
func TestSeedAnnouncedOnce(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL is not set: this test needs a real redis-server's ACLs")
	}
	url, prefix := sharedRedis(t)
	admin, err := redisstore.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	ac := admin.NewClient()
	defer ac.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	seeder, err := redisstore.New(ac, redisstore.WithKeyPrefix(prefix), redisstore.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seeder.PutIfEmpty(t.Context(), DemoInventory()...); err != nil {
		t.Fatal(err)
	}
	user := "seedonce-" + prefix
	rule := strings.Fields(redisstore.ACLRule(prefix) + " -xadd")
	if err := ac.Do(t.Context(), append([]any{"ACL", "SETUSER", user, "on", ">pw"}, anySlice(rule)...)...).Err(); err != nil {
		t.Fatal(err)
	}
	defer ac.Do(context.Background(), "ACL", "DELUSER", user)
	cfg, err := redisstore.ParseURL(strings.Replace(url, "redis://", "redis://"+user+":pw@", 1))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.NewClient()
	defer c.Close()
	store, err := redisstore.New(c, redisstore.WithKeyPrefix(prefix), redisstore.WithLogger(quiet), redisstore.WithRequireInitialized())
	if err != nil {
		t.Fatal(err)
	}
	gate := newGate(store)
	api, err := inventory.New(gate, inventory.WithAPIKeys(testKey), inventory.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	var logs proctest.Buffer
	boot := storeBoot{storeInit: storeInit{cfg: Config{Seed: "demo", StoreTimeout: 5 * time.Second}, seed: DemoInventory(),
		store: store, log: slog.New(slog.NewTextHandler(&logs, nil))}, served: served{api: api, gate: gate}, state: new(bootState)}
	for range 3 {
		if err := boot.once(t.Context()); err == nil || !strings.Contains(err.Error(), "XADD") {
			t.Fatalf("a try by a user without XADD = %v; want the store not ready, naming XADD", err)
		}
	}
	if n := strings.Count(logs.String(), "not seeding"); n != 1 || gate.closed() == nil {
		t.Errorf("three tries logged %q %d times (want once), open %v:\n%s", "not seeding", n, gate.closed() == nil, logs.String())
	}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestFileHint: a secret file the process may not read is named with the
// process's uid and the image's, 65532.
func TestFileHint(t *testing.T) {
	err := fileHint(fmt.Errorf("INVENTORY_API_KEYS_FILE: %w", &fs.PathError{Op: "open", Path: "/run/secrets/keys", Err: fs.ErrPermission}))
	for _, want := range []string{"INVENTORY_API_KEYS_FILE: open /run/secrets/keys: permission denied", "uid 65532", fmt.Sprintf("runs as uid %d", os.Getuid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Error("the hint hides the cause")
	}
	other := errors.New("no such file")
	if fileHint(other) != other {
		t.Error("another error is changed")
	}
}

// TestNoSeed: without Config.Seed nothing is written, and a store never
// initialized is not served: /readyz and the API answer 503 naming the
// fault and how to fix it, until the store is initialized (here by
// another process), which the server then serves without a restart.
func TestNoSeed(t *testing.T) {
	node := newRedis(t)
	url := "redis://" + node.Addr() + "/0"
	s := launch(t, Config{Framework: "gin", APIKeys: []string{testKey}, RedisURL: url})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := s.do(t, http.MethodGet, "/readyz", "", "")
		if r.status == http.StatusServiceUnavailable && strings.Contains(string(r.body), "not initialized") {
			if !strings.Contains(string(r.body), "-seed empty") {
				t.Errorf("/readyz = %s; want the fix (-seed) named", r.body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %s; want 503 naming a store not initialized", r.status, r.body)
		}
	}
	// The background boot meets the fault too, and the API answers with it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := s.do(t, http.MethodGet, "/v1/inventory", testKey, "")
		if strings.Contains(string(r.body), "not initialized") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET = %d %s; want 503 naming a store not initialized", r.status, r.body)
		}
	}
	for _, r := range []response{s.do(t, http.MethodGet, "/v1/inventory", testKey, ""), s.patch(t, "/v1/inventory/1", `{"quantity":1}`)} {
		if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), `"code":"unavailable"`) ||
			!strings.Contains(string(r.body), "not initialized") || !strings.Contains(string(r.body), "-seed empty") {
			t.Errorf("the API on a store not initialized = %d %s; want 503 unavailable naming the fault and -seed", r.status, r.body)
		}
	}
	if !strings.Contains(s.logs.String(), "no seed (-seed)") || strings.Contains(s.logs.String(), "initialized the store") {
		t.Errorf("the log does not say that nothing was seeded:\n%s", s.logs.String())
	}
	if n := strings.Count(s.logs.String(), "level=ERROR msg=\"redisstore: initialization fault: the inventory store"); n != 1 {
		t.Errorf("the fault was logged %d times, want once:\n%s", n, s.logs.String())
	}

	// Another process initializes it: this one serves it, empty.
	c := redis.NewClient(&redis.Options{Addr: node.Addr()})
	defer c.Close()
	other, err := redisstore.New(c, redisstore.WithKeyPrefix("inventory"))
	if err != nil {
		t.Fatal(err)
	}
	if did, err := other.Initialize(t.Context()); err != nil || did != redisstore.Initialized {
		t.Fatalf("Initialize = %v, %v", did, err)
	}
	waitServerReady(t, s)
	if got := s.list(t); len(got) != 0 {
		t.Errorf("GET = %+v, want an empty list", got)
	}
}

// TestSeedEmpty: -seed empty initializes a fresh store with no pets: ready,
// and it lists []; a restart with -seed demo on it writes nothing.
func TestSeedEmpty(t *testing.T) {
	url := "redis://" + newRedis(t).Addr() + "/0"
	for _, run := range []struct{ framework, seed, logs string }{
		{"fiber", SeedEmpty, "initialized the store (-seed)"},
		{"gin", SeedDemo, "already initialized: not seeding"}, // the store is initialized by then
	} {
		s := launch(t, Config{Framework: run.framework, APIKeys: []string{testKey}, RedisURL: url, Seed: run.seed})
		waitServerReady(t, s)
		if got := s.list(t); len(got) != 0 {
			t.Errorf("-seed %s: GET = %+v, want []", run.seed, got)
		}
		if !strings.Contains(s.logs.String(), run.logs) {
			t.Errorf("-seed %s: the log does not say %q:\n%s", run.seed, run.logs, s.logs.String())
		}
	}
}

// TestAdoptsAStoreSeededBefore: a store seeded before the initialization
// marker existed (pets, no marker) is adopted by a server without -seed:
// ready, its pets kept, logged; an upgrade needs no step.
func TestAdoptsAStoreSeededBefore(t *testing.T) {
	node := newRedis(t)
	c := redis.NewClient(&redis.Options{Addr: node.Addr()})
	defer c.Close()
	old, err := redisstore.New(c, redisstore.WithKeyPrefix("inventory"))
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Put(t.Context(), DemoInventory()...); err != nil { // as a seed before the marker left it
		t.Fatal(err)
	}
	s := launch(t, Config{Framework: "gin", APIKeys: []string{testKey}, RedisURL: "redis://" + node.Addr() + "/0"})
	waitServerReady(t, s)
	if got := s.list(t); !slices.Equal(got, DemoInventory()) {
		t.Errorf("GET = %+v, want the pets kept", got)
	}
	if !strings.Contains(s.logs.String(), "adopted a store seeded before the initialization marker") {
		t.Errorf("the adoption is not logged:\n%s", s.logs.String())
	}
	if n, err := c.Exists(t.Context(), "{inventory}:initialized").Result(); err != nil || n != 1 {
		t.Errorf("the marker after the adoption: %d, %v", n, err)
	}
}

// TestMarkerAloneDeleted: the store's marker key alone is deleted on a
// real redis-server under a running server that holds the inventory (its
// change log and items kept, so a list since the state held finds nothing
// new): without any /readyz, lists answer 503 naming the vanished store
// within 5 s, and /readyz too; the metrics say store-vanished and count
// no configuration fault. The marker put back, both answer 200; deleted
// again, /readyz finds it first and lists follow. Both frameworks.
func TestMarkerAloneDeleted(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			node := newRedis(t)
			s := start(t, Config{Framework: fw, RedisURL: "redis://" + node.Addr() + "/0"})
			marker := "{inventory}:initialized"
			if got := s.list(t); len(got) != len(DemoInventory()) {
				t.Fatalf("before: %d pets, want the demo's", len(got))
			}
			// await polls path (with the API key) until it answers status
			// with a body holding want, for at most 5 s.
			await := func(path string, status int, want string) time.Duration {
				t.Helper()
				began := time.Now()
				var last response
				err := redistest.Poll(5*time.Second, func() error {
					if last = s.do(t, http.MethodGet, path, testKey, ""); last.status != status || !strings.Contains(string(last.body), want) {
						return fmt.Errorf("%d %s", last.status, last.body)
					}
					return nil
				})
				if err != nil {
					t.Fatalf("GET %s: %v; want %d with %q", path, err, status, want)
				}
				return time.Since(began)
			}

			if _, err := node.Do("DEL", marker); err != nil {
				t.Fatal(err)
			}
			if n, err := node.Do("EXISTS", "{inventory}:log", "{inventory}:items"); err != nil || fmt.Sprint(n) != "2" {
				t.Fatalf("the change log and the items must remain: EXISTS = %v, %v", n, err)
			}
			listFirst := await("/v1/inventory", http.StatusServiceUnavailable, "vanished")
			readyAfter := await("/readyz", http.StatusServiceUnavailable, "vanished")
			m := s.do(t, http.MethodGet, "/metrics", "", "")
			if body := string(m.body); !strings.Contains(body, "\ninventory_store_uninitialized{kind=\"store-vanished\"} 1\n") ||
				!strings.Contains(body, "\ninventory_store_config_faults_total 0\n") {
				t.Errorf("/metrics with the marker deleted: want store-vanished 1 and no configuration fault counted:\n%s", grepLines(body, "inventory_store_"))
			}

			if _, err := node.Do("SET", marker, "seed restored"); err != nil {
				t.Fatal(err)
			}
			await("/readyz", http.StatusOK, "ready")
			await("/v1/inventory", http.StatusOK, `"petId":12`)

			if _, err := node.Do("DEL", marker); err != nil {
				t.Fatal(err)
			}
			readyFirst := await("/readyz", http.StatusServiceUnavailable, "vanished")
			listAfter := await("/v1/inventory", http.StatusServiceUnavailable, "vanished")
			t.Logf("marker deleted: list 503 after %v, then /readyz after %v; deleted again: /readyz 503 after %v, then list after %v",
				listFirst.Round(time.Millisecond), readyAfter.Round(time.Millisecond), readyFirst.Round(time.Millisecond), listAfter.Round(time.Millisecond))
		})
	}
}

// grepLines is the lines of text that hold word.
func grepLines(text, word string) string {
	var lines []string
	for l := range strings.Lines(text) {
		if strings.Contains(l, word) {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	return strings.Join(lines, "\n")
}
