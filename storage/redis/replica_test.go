package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// replicated starts a master and one replica that replicates through a
// proxy delaying every chunk by lag, waits until the replica is in sync,
// and returns both with a client on each.
func replicated(t *testing.T, lag time.Duration) (master, replica *redistest.Node, mc, rc *redis.Client) {
	t.Helper()
	master = redistest.StartNode(t, "acks-master")
	proxy := redistest.StartProxy(t, master.Addr(), lag)
	replica = redistest.StartNode(t, "acks-replica", "--replicaof", "127.0.0.1", strconv.Itoa(proxy.Port()),
		"--enable-debug-command", "local") // DEBUG SLEEP: a replica that stops acknowledging
	err := redistest.Poll(20*time.Second, func() error {
		if v, _ := replica.Info("replication", "master_link_status"); v != "up" {
			return fmt.Errorf("replica's master_link_status is %q", v)
		}
		if v, _ := master.Info("replication", "connected_slaves"); v != "1" {
			return fmt.Errorf("master's connected_slaves is %q", v)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the replica did not sync within 20s: %v\nmaster's log:\n%s\nreplica's log:\n%s", err, master.Log(), replica.Log())
	}
	client := func(n *redistest.Node) *redis.Client {
		opts, err := optionsFromURL("redis://" + n.Addr() + "/0")
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opts)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return master, replica, client(master), client(replica)
}

// TestReplicaAcksRealReplica: with a replica 50 ms behind, every write
// with WithReplicaAcks(1, 2s) succeeds and is on the replica when it
// returns. While the replica is stalled (DEBUG SLEEP), a write is applied
// but answered unavailable once the timeout passes. That proves WAIT runs
// on the write's own connection: on any other, whose last write the
// replica acknowledged before it stalled, WAIT would count it at once.
func TestReplicaAcksRealReplica(t *testing.T) {
	t.Parallel()
	_, replica, mc, _ := replicated(t, 50*time.Millisecond)
	ctx := t.Context()
	s := newTestStore(t, mc, WithReplicaAcks(1, 2*time.Second))
	items := "{" + s.KeyPrefix() + "}:items"
	onReplica := func(key, field string) string {
		t.Helper()
		v, err := replica.Do("HGET", key, field)
		if err != nil {
			t.Fatalf("HGET %s %s on the replica: %v", key, field, err)
		}
		str, _ := v.(string) // nil: no such field
		return str
	}
	start := time.Now()
	if wrote, err := s.PutIfEmpty(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); !wrote || err != nil {
		t.Fatalf("PutIfEmpty = %v, %v", wrote, err)
	}
	if got := onReplica(items, "1"); got != "1:sold" {
		t.Errorf("after PutIfEmpty returned, the replica has entry %q, want 1:sold", got)
	}
	if err := s.Put(ctx, inventory.Item{PetID: 2, Quantity: 2, Status: inventory.StatusPending}); err != nil {
		t.Fatal(err)
	}
	if got := onReplica(items, "2"); got != "2:pending" {
		t.Errorf("after Put returned, the replica has entry %q, want 2:pending", got)
	}
	if _, err := s.SetQuantity(ctx, 2, 20); err != nil {
		t.Fatal(err)
	}
	if got := onReplica(items, "2"); got != "20:pending" {
		t.Errorf("after SetQuantity returned, the replica has entry %q, want 20:pending", got)
	}
	if err := s.Delete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := onReplica(items, "1"); got != "" {
		t.Errorf("after Delete returned, the replica still has entry %q", got)
	}
	acked := time.Since(start)
	if st := s.Stats(); st.AckShortfalls != 0 {
		t.Errorf("AckShortfalls = %d, want 0", st.AckShortfalls)
	}

	// Stall the replica for 2 s, and wait until it no longer answers. (The
	// goroutine ends with the sleep, or when the node is killed.)
	go func() { _, _ = redistest.Do(replica.Addr(), 5*time.Second, "DEBUG", "SLEEP", "2") }()
	if err := redistest.Poll(2*time.Second, func() error {
		if _, err := redistest.Do(replica.Addr(), 50*time.Millisecond, "PING"); err == nil {
			return errors.New("the replica still answers PING")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	short, err := New(mc, WithKeyPrefix(s.KeyPrefix()), WithReplicaAcks(1, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = short.SetQuantity(ctx, 2, 21)
	if !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "0 of the 1 replica acknowledgements") {
		t.Fatalf("SetQuantity with the replica stalled = %v, want unavailable for want of acknowledgements", err)
	}
	plain, err := New(mc, WithKeyPrefix(s.KeyPrefix())) // a list with acknowledgements would wait for the replica
	if err != nil {
		t.Fatal(err)
	}
	if items, err := plain.List(ctx); err != nil || len(items) != 1 || items[0].Quantity != 21 {
		t.Errorf("List = %v, %v; want the unacknowledged write applied on the master", items, err)
	}
	t.Logf("4 writes acknowledged by a replica 50ms behind in %v; with the replica stalled: 503 after the 200ms ack timeout", acked.Round(time.Millisecond))
}

// TestReadyRealReplica: the master is ready; the same store on the
// replica (a REDIS_URL naming it by mistake, or a master demoted by a
// failover) answers PING but is not ready: READONLY.
func TestReadyRealReplica(t *testing.T) {
	t.Parallel()
	_, _, mc, rc := replicated(t, 0)
	prefix := uniquePrefix(t)
	onMaster, err := New(mc, WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	onReplica, err := New(rc, WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := onMaster.Ready(ctx); err != nil {
		t.Errorf("Ready on the master = %v", err)
	}
	if err := onReplica.Ping(ctx); err != nil {
		t.Fatalf("Ping on the replica = %v", err)
	}
	if err := onReplica.Ready(ctx); !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "READONLY") {
		t.Errorf("Ready on the replica = %v, want unavailable: READONLY", err)
	}
	// Writes there are unavailable (503), never an unknown error (500).
	if err := onReplica.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("Put on the replica = %v, want unavailable", err)
	}
	if _, err := onReplica.PutIfEmpty(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("PutIfEmpty on the replica = %v, want unavailable", err)
	}
	if err := onReplica.Delete(ctx, 1); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("Delete on the replica = %v, want unavailable", err)
	}
	// Reads work there once the master's change log has reached it (a
	// full read of a store with no log yet writes a mark to start from).
	pet := inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}
	if err := onMaster.Put(ctx, pet); err != nil {
		t.Fatal(err)
	}
	err = redistest.Poll(5*time.Second, func() error {
		items, err := onReplica.List(ctx)
		if err == nil && (len(items) != 1 || items[0] != pet) {
			err = fmt.Errorf("%+v, want [%+v]", items, pet)
		}
		return err
	})
	if err != nil {
		t.Errorf("List on the replica = %v: reads work there, which is why Ping and a read are not readiness", err)
	}
}

// TestSentinelTopology: through real sentinels, the store on the master
// they name is ready and serves; a master_name the sentinels do not know
// is a configuration error (503, logged once), never "not found" or an
// empty list (go-redis wraps the sentinels' nil reply); and sentinels that
// cannot be reached are unavailable.
func TestSentinelTopology(t *testing.T) {
	t.Parallel()
	set := redistest.StartSentinel(t, redistest.SentinelOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	storeFor := func(url string, opts ...Option) *Store {
		t.Helper()
		return storeAtURL(t, url, append([]Option{WithKeyPrefix(uniquePrefix(t))}, opts...)...)
	}
	addrs := set.SentinelAddrs()
	good := storeFor("redis://" + addrs[0] + "?master_name=" + set.MasterName + "&addr=" + addrs[1] + "&addr=" + addrs[2])
	if err := good.Ready(ctx); err != nil {
		t.Fatalf("Ready through the sentinels = %v", err)
	}
	if err := good.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); err != nil {
		t.Fatal(err)
	}
	if _, err := good.SetQuantity(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}

	var buf syncBuffer
	wrong := storeFor("redis://"+addrs[0]+"?master_name=no-such-master", WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	for name, call := range calls(wrong) {
		err := call(ctx)
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) || errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("%s with a master name the sentinels do not know = %v, want unavailable and misconfigured", name, err)
		}
	}
	if logs := buf.String(); strings.Count(logs, "configuration fault") != 1 || !strings.Contains(logs, `no master named \"no-such-master\"`) {
		t.Errorf("want one configuration fault naming the master name in the log:\n%s", logs)
	}
	// Without WithClientConfig the store cannot know the name: the fix
	// says where it comes from.
	cfg, err := ParseURL("redis://" + addrs[0] + "?master_name=no-such-master")
	if err != nil {
		t.Fatal(err)
	}
	bare := cfg.NewClient()
	defer bare.Close()
	unnamed, err := New(bare, WithLogger(discardLog))
	if err != nil {
		t.Fatal(err)
	}
	if err := unnamed.Ready(ctx); !strings.Contains(err.Error(), "no master of the name FailoverOptions.MasterName gives") {
		t.Errorf("Ready without WithClientConfig = %v; want the fix to name FailoverOptions.MasterName", err)
	}

	gone := storeFor("redis://" + closedAddr(t) + "?master_name=" + set.MasterName)
	for name, call := range calls(gone) {
		// The API's store timeout bounds each call; within it, no
		// sentinel answering is unavailable.
		callCtx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		err := call(callCtx)
		cancel()
		if !errors.Is(err, inventory.ErrUnavailable) || errors.Is(err, ErrMisconfigured) {
			t.Errorf("%s with no sentinel reachable = %v, want unavailable", name, err)
		}
	}
}

// TestClusterURLOnSingleNode: REDIS_URL says Cluster but names a server
// with cluster support disabled: a configuration error naming the fix,
// answered 503, not an unknown error.
func TestClusterURLOnSingleNode(t *testing.T) {
	t.Parallel()
	node := redistest.StartNode(t, "not-a-cluster")
	var buf syncBuffer
	s := storeAtURL(t, "redis://"+node.Addr()+"?cluster=true", WithKeyPrefix(uniquePrefix(t)), WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for name, call := range calls(s) {
		if err := call(ctx); !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) {
			t.Errorf("%s = %v, want unavailable and misconfigured", name, err)
		}
	}
	if logs := buf.String(); strings.Count(logs, "configuration fault") != 1 || !strings.Contains(logs, "not a Cluster node") {
		t.Errorf("want one configuration error saying the server is not a Cluster node:\n%s", logs)
	}
}

// TestWriteWaitRefusedByDemotedMaster: with WithReplicaAcks, a write
// whose EXEC succeeded and whose WAIT blocks (the replica stopped) while
// its master is demoted (REPLICAOF, what a graceful failover or a healed
// split brain does) meets Redis's answer to the blocked WAIT, "UNBLOCKED
// … (master -> replica?)". The write's outcome is unknown: SetQuantity
// and Put fail as unavailable, and the API answers the update 503 with
// Retry-After, never 500.
func TestWriteWaitRefusedByDemotedMaster(t *testing.T) {
	t.Parallel()
	master, replica, mc, _ := replicated(t, 0)
	ctx := t.Context()
	s := newTestStore(t, mc, WithReplicaAcks(1, time.Minute)) // WAIT blocks until the demotion
	if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
		t.Fatal(err)
	}
	const key = "demoted-test-key"
	api, err := inventory.New(s, inventory.WithAPIKeys(key), inventory.WithStoreTimeout(2*time.Minute),
		inventory.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	// demoteDuring runs write with the replica stopped, sends REPLICAOF
	// to the master once the write's WAIT blocks there, and returns the
	// write's error; then it makes the master a master again and waits
	// until the replica is in sync.
	demoteDuring := func(write func() error) error {
		t.Helper()
		replica.Stop()
		done := make(chan error, 1)
		go func() { done <- write() }()
		if err := redistest.Poll(30*time.Second, func() error {
			if v, _ := master.Info("clients", "blocked_clients"); v != "1" {
				return fmt.Errorf("the master has %q blocked clients, want the write's WAIT", v)
			}
			return nil
		}); err != nil {
			replica.Continue()
			t.Fatal(err)
		}
		if _, err := master.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(replica.Port)); err != nil {
			t.Fatalf("REPLICAOF on the master: %v", err)
		}
		err := <-done
		if _, err := master.Do("REPLICAOF", "NO", "ONE"); err != nil {
			t.Fatalf("REPLICAOF NO ONE on the master: %v", err)
		}
		replica.Continue()
		if _, err := redistest.Replicated("{"+s.KeyPrefix()+"}:synced", master, replica); err != nil {
			t.Fatalf("the replica did not catch up after the demotion: %v", err)
		}
		return err
	}
	for name, write := range map[string]func() error{
		"SetQuantity": func() error { _, err := s.SetQuantity(ctx, 1, 2); return err },
		"Put":         func() error { return s.Put(ctx, inventory.Item{PetID: 2, Quantity: 2, Status: inventory.StatusSold}) },
	} {
		err := demoteDuring(write)
		if !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "UNBLOCKED") ||
			!strings.Contains(err.Error(), "the outcome is unknown") {
			t.Errorf("%s whose WAIT was refused by its demoted master = %v, want unavailable, outcome unknown", name, err)
		}
	}

	var rec *httptest.ResponseRecorder
	_ = demoteDuring(func() error {
		req := httptest.NewRequest(http.MethodPatch, "/inventory/1", strings.NewReader(`{"quantity":3}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		rec = httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return nil
	})
	var body struct{ Code string }
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusServiceUnavailable || body.Code != "unavailable" || rec.Header().Get("Retry-After") == "" {
		t.Errorf("the update whose WAIT was refused by its demoted master answered %d %q (Retry-After %q), want 503 unavailable with Retry-After: %s",
			rec.Code, body.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
}
