package redisstore

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// TestListCacheAcrossStores: two API instances (two processes in
// production) on one Redis, each answering lists from its cached
// encoding: a write through one is in the next list of the other.
func TestListCacheAcrossStores(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		a := newTestStore(t, c)
		b, err := New(c, WithKeyPrefix(a.KeyPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Put(t.Context(), inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
			t.Fatal(err)
		}
		const key = "k"
		apiA, _ := inventory.New(a, inventory.WithAPIKeys(key))
		apiB, _ := inventory.New(b, inventory.WithAPIKeys(key))
		do := func(h http.Handler, method, path, body string) string {
			t.Helper()
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("%s %s = %d %s", method, path, w.Code, w.Body)
			}
			return w.Body.String()
		}
		for i := range 3 {
			want := `[{"petId":1,"quantity":` + string(rune('1'+i)) + `,"status":"available"}]`
			if i > 0 {
				do(apiB, http.MethodPatch, "/inventory/1", `{"quantity":`+string(rune('1'+i))+`}`)
			}
			for range 2 { // the second list is served from the cache
				if got := do(apiA, http.MethodGet, "/inventory", ""); got != want {
					t.Fatalf("after %d updates through the other instance, list = %s, want %s", i, got, want)
				}
			}
		}
	})
}

// TestConfigurationErrorLoggedOnce: a client that reaches the wrong kind
// of server is logged once as a configuration error naming the fix,
// however many calls fail; every call fails unavailable.
func TestConfigurationErrorLoggedOnce(t *testing.T) {
	m, c := miniClient(t)
	var buf syncBuffer
	s := newTestStore(t, c, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	m.SetError("MOVED 866 127.0.0.1:7001")
	for range 5 {
		for name, call := range calls(s) {
			if err := call(t.Context()); !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) {
				t.Fatalf("%s = %v, want unavailable and misconfigured", name, err)
			}
		}
	}
	m.SetError("")
	logs := buf.String()
	if n := strings.Count(logs, "configuration fault"); n != 1 || !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "cluster=true") {
		t.Errorf("logged %d configuration errors, want 1 at level ERROR naming the fix (cluster=true):\n%s", n, logs)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestClusterReloadThrottled: a ClusterClient whose every call fails asks
// for a slot-map reload at most once per reloadInterval, and at least once.
func TestClusterReloadThrottled(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	s := storeAtURL(t, "redis://"+addr+"?cluster=true&dialer_retries=1", WithLogger(discardLog))
	start := time.Now()
	calls := 0
	for time.Since(start) < time.Second {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := s.SetQuantity(t.Context(), 1, 1); !errors.Is(err, inventory.ErrUnavailable) {
					t.Errorf("SetQuantity on a Cluster that does not answer = %v, want unavailable", err)
				}
			})
		}
		wg.Wait()
		calls += 8
	}
	elapsed := time.Since(start)
	reloads := s.Stats().ClusterReloads
	limit := uint64(elapsed/reloadInterval) + 1
	t.Logf("%d failed calls in %v asked for %d reloads (at most %d allowed)", calls, elapsed.Round(time.Millisecond), reloads, limit)
	if reloads < 1 || reloads > limit {
		t.Errorf("%d reloads for %d failed calls in %v, want 1..%d", reloads, calls, elapsed, limit)
	}
	if uint64(calls) <= limit {
		t.Fatalf("only %d calls: the test did not make more calls than reloads allowed", calls)
	}
}

// TestReplicaAcksMiniredis: miniredis has no replicas (its WAIT answers
// 0), so with WithReplicaAcks(1, …) every write is applied but answered
// unavailable, and counted, and so is a list; PutIfEmpty that writes nothing waits for
// nothing.
func TestReplicaAcksMiniredis(t *testing.T) {
	_, c := miniClient(t)
	s := newTestStore(t, c, WithReplicaAcks(1, 10*time.Millisecond))
	ctx := t.Context()
	pet := inventory.Item{PetID: 5, Quantity: 1, Status: inventory.StatusSold}
	wrote, err := s.PutIfEmpty(ctx, pet)
	if !wrote || !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "0 of the 1 replica acknowledgements") {
		t.Fatalf("PutIfEmpty = %v, %v; want written and unavailable for want of acknowledgements", wrote, err)
	}
	if wrote, err := s.PutIfEmpty(ctx, pet); wrote || err != nil {
		t.Errorf("PutIfEmpty of a store with entries = %v, %v; want false, nil (nothing written, nothing to wait for)", wrote, err)
	}
	if err := s.Put(ctx, pet); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("Put = %v, want unavailable", err)
	}
	if _, err := s.SetQuantity(ctx, 5, 9); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("SetQuantity = %v, want unavailable", err)
	}
	// A list shows only a state the replicas hold: none does.
	if items, err := s.List(ctx); !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "not shown") {
		t.Errorf("List = %v, %v; want unavailable, the state read held by no replica", items, err)
	}
	plain, err := New(c, WithKeyPrefix(s.KeyPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	if items, err := plain.List(ctx); err != nil || len(items) != 1 || items[0].Quantity != 9 {
		t.Errorf("List without WithReplicaAcks = %v, %v; want the write applied although it was not acknowledged", items, err)
	}
	if err := s.Delete(ctx, 5); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("Delete = %v, want unavailable", err)
	}
	if got := s.Stats().AckShortfalls; got != 5 {
		t.Errorf("AckShortfalls = %d, want 5 (four writes, one list)", got)
	}
	for _, tc := range []struct {
		n       int
		timeout time.Duration
	}{{-1, time.Second}, {17, time.Second}, {1, 0}, {1, time.Microsecond}} {
		if _, err := New(c, WithReplicaAcks(tc.n, tc.timeout)); err == nil || !strings.Contains(err.Error(), "WithReplicaAcks") {
			t.Errorf("New(WithReplicaAcks(%d, %v)) = %v, want an error naming the option", tc.n, tc.timeout, err)
		}
	}
}

// TestReadyMiniredis: a store that serves is ready, and Ready leaves no
// trace in Redis.
func TestReadyMiniredis(t *testing.T) {
	m, c := miniClient(t)
	s, err := New(c, WithKeyPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(t.Context()); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	if keys := m.Keys(); len(keys) != 0 {
		t.Errorf("Ready left keys: %v", keys)
	}
	m.Close()
	if err := s.Ready(t.Context()); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("Ready with Redis gone = %v, want unavailable", err)
	}
}

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestClusterMovedIsUnavailable: on a ClusterClient, a MOVED that
// outlasts go-redis's redirects (a slot moving) is unavailable for now,
// not a misconfiguration and not an unknown error, and asks for a
// slot-map reload. miniredis answers CLUSTER SLOTS as a one-node Cluster.
func TestClusterMovedIsUnavailable(t *testing.T) {
	m, _ := miniClient(t)
	s := storeAtURL(t, "redis://"+m.Addr()+"?cluster=true&max_redirects=1", WithLogger(discardLog))
	if err := s.Put(t.Context(), inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); err != nil {
		t.Fatal(err) // loads the slot map while the node still answers
	}
	m.SetError("MOVED 163 " + m.Addr())
	defer m.SetError("")
	for name, call := range calls(s) {
		if name == "Ping" {
			continue // PING has no key, so no slot to move
		}
		err := call(t.Context())
		if !errors.Is(err, inventory.ErrUnavailable) || errors.Is(err, ErrMisconfigured) {
			t.Errorf("%s with its slot moving = %v, want unavailable and not misconfigured", name, err)
		}
	}
	if s.Stats().ClusterReloads == 0 {
		t.Error("no slot-map reload was asked for after MOVED")
	}
}
