package redisstore

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// waitCalls returns how many WAITs node has run (INFO commandstats).
func waitCalls(t *testing.T, node *redistest.Node) int {
	t.Helper()
	v, err := node.Info("commandstats", "cmdstat_wait")
	if err != nil {
		return 0 // no WAIT run yet: no such line
	}
	n, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(v, ",", 2)[0], "calls="))
	if err != nil {
		t.Fatalf("cmdstat_wait %q: %v", v, err)
	}
	return n
}

// stall makes replica stop answering (and acknowledging) for d, and waits
// until it no longer answers PING.
func stall(t *testing.T, replica *redistest.Node, d time.Duration) {
	t.Helper()
	go func() {
		_, _ = redistest.Do(replica.Addr(), d+5*time.Second, "DEBUG", "SLEEP", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	}()
	if err := redistest.Poll(2*time.Second, func() error {
		if _, err := redistest.Do(replica.Addr(), 50*time.Millisecond, "PING"); err == nil {
			return errors.New("the replica still answers PING")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestListConfirmedRealReplica: with WithReplicaAcks(1, …) on a master
// with one replica 50 ms behind, a list shows only a state the replica
// holds. A list that finds nothing new runs no WAIT; one that finds a
// write WAITs once, on the connection that read it. While the replica is
// stalled, a write made without acknowledgements (applied on the master
// only) is not shown: ListChanges and List answer unavailable after the
// timeout, and once the replica is back the same list shows the write.
// It runs on a Client (a pinned Conn) and on a Ring, whose reads are held
// on one connection by WATCH. That the WAIT never lands on a fresh
// connection, where it would answer at once, is what the lagged failover
// tests of internal/e2e prove.
func TestListConfirmedRealReplica(t *testing.T) {
	t.Parallel()
	master, replica, mc, _ := replicated(t, 50*time.Millisecond)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"only": master.Addr()}})
	t.Cleanup(func() { _ = ring.Close() })
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
	}{{"client", mc}, {"ring", ring}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := newTestStore(t, tc.client, WithReplicaAcks(1, 300*time.Millisecond))
			plain, err := New(tc.client, WithKeyPrefix(s.KeyPrefix())) // writes that wait for no replica
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
				t.Fatal(err)
			}
			waits := waitCalls(t, master)
			full, err := s.ListChanges(ctx, "")
			if err != nil || !full.Full || len(full.Items) != 1 {
				t.Fatalf("full read = %+v, %v", full, err)
			}
			if got := waitCalls(t, master) - waits; got != 1 {
				t.Errorf("a full read ran %d WAITs, want 1", got)
			}
			waits = waitCalls(t, master)
			for range 3 {
				same, err := s.ListChanges(ctx, full.Cursor)
				if err != nil || same.Cursor != full.Cursor || len(same.Log) != 0 {
					t.Fatalf("a read with nothing new = %+v, %v", same, err)
				}
			}
			if got := waitCalls(t, master) - waits; got != 0 {
				t.Errorf("3 reads that found nothing new ran %d WAITs, want 0", got)
			}
			if _, err := plain.SetQuantity(ctx, 1, 2); err != nil {
				t.Fatal(err)
			}
			waits = waitCalls(t, master)
			ch, err := s.ListChanges(ctx, full.Cursor)
			if err != nil || len(ch.Log) != 1 || ch.Log[0].Quantity != 2 {
				t.Fatalf("a read after a write = %+v, %v", ch, err)
			}
			if got := waitCalls(t, master) - waits; got != 1 {
				t.Errorf("a read that found a write ran %d WAITs, want 1", got)
			}

			stall(t, replica, 1500*time.Millisecond)
			if _, err := plain.SetQuantity(ctx, 1, 3); err != nil {
				t.Fatal(err)
			}
			shortfalls := s.Stats().AckShortfalls
			for name, read := range map[string]func() error{
				"ListChanges from the cursor": func() error { _, err := s.ListChanges(ctx, ch.Cursor); return err },
				"ListChanges from nothing":    func() error { _, err := s.ListChanges(ctx, ""); return err },
				"List":                        func() error { _, err := s.List(ctx); return err },
			} {
				if err := read(); !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "0 of the 1 replica acknowledgements") {
					t.Errorf("%s with the replica stalled after a write = %v, want unavailable: the state is held by no replica", name, err)
				}
			}
			if got := s.Stats().AckShortfalls - shortfalls; got != 3 {
				t.Errorf("AckShortfalls rose by %d, want 3", got)
			}
			// Once the replica is back, the same list shows the write.
			err = redistest.Poll(5*time.Second, func() error {
				after, err := s.ListChanges(ctx, ch.Cursor)
				if err != nil {
					return err
				}
				if len(after.Log) != 1 || after.Log[0].Quantity != 3 {
					t.Fatalf("after the replica came back: %+v", after)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestListConfirmedOnReplica: a list whose read reached a replica (a
// master demoted by a failover) cannot be confirmed, since Redis refuses
// WAIT there: it is unavailable, never a 500 and never the replica's
// state. The same store without acknowledgements lists the replica's
// state, as before.
func TestListConfirmedOnReplica(t *testing.T) {
	t.Parallel()
	_, _, mc, rc := replicated(t, 0)
	ctx := t.Context()
	s := newTestStore(t, mc, WithReplicaAcks(1, time.Second))
	if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListChanges(ctx, ""); err != nil { // the log exists: a read on the replica writes no mark
		t.Fatal(err)
	}
	onReplica, err := New(rc, WithKeyPrefix(s.KeyPrefix()), WithReplicaAcks(1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = onReplica.ListChanges(ctx, "")
	if !errors.Is(err, inventory.ErrUnavailable) || !strings.Contains(err.Error(), "is a replica") {
		t.Errorf("a list read on a replica with WithReplicaAcks = %v, want unavailable naming the replica", err)
	}
	plain, err := New(rc, WithKeyPrefix(s.KeyPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	if items, err := plain.List(ctx); err != nil || len(items) != 1 {
		t.Errorf("the same list without acknowledgements = %v, %v; want the replica's one item", items, err)
	}
}

// TestListConfirmedCluster: on a Cluster, the WAIT of a list runs on the
// master that owns the store's slot, once for a read that found a write
// and not at all for one that found nothing new.
func TestListConfirmedCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	seeds, _ := c.Others(c.KeySlot("{" + DefaultKeyPrefix + "}:items"))
	client := topologyClient(t, "redis://"+seeds[0].Addr()+"?addr="+seeds[1].Addr(), Cluster)
	ctx := t.Context()
	s := newTestStore(t, client, WithReplicaAcks(1, 2*time.Second))
	owner := c.MasterOf(c.KeySlot("{" + s.KeyPrefix() + "}:items"))
	if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
		t.Fatal(err)
	}
	full, err := s.ListChanges(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	waits := waitCalls(t, owner)
	if same, err := s.ListChanges(ctx, full.Cursor); err != nil || same.Cursor != full.Cursor {
		t.Fatalf("a read with nothing new = %+v, %v", same, err)
	}
	if got := waitCalls(t, owner) - waits; got != 0 {
		t.Errorf("a read that found nothing new ran %d WAITs on the slot's master, want 0", got)
	}
	if _, err := s.SetQuantity(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	waits = waitCalls(t, owner)
	ch, err := s.ListChanges(ctx, full.Cursor)
	if err != nil || len(ch.Log) != 1 || ch.Log[0].Quantity != 2 {
		t.Fatalf("a read after a write = %+v, %v", ch, err)
	}
	if got := waitCalls(t, owner) - waits; got != 1 {
		t.Errorf("a read that found a write ran %d WAITs on the slot's master, want 1", got)
	}
}
