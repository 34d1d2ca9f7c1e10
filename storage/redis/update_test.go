package redisstore

import (
	"errors"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// TestSetQuantityRoundTrips: an update is two round trips (WATCH and HGET
// pipelined on the transaction's connection, then MULTI…EXEC), and so is
// the update of a pet with no entry (the pipeline, then UNWATCH).
func TestSetQuantityRoundTrips(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		rt := &commands{}
		c.AddHook(rt)
		s := newTestStore(t, c)
		if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusPending}); err != nil {
			t.Fatal(err)
		}
		// Warm the pool: a new connection's HELLO goes through the hooks too.
		if _, err := s.SetQuantity(ctx, 1, 1); err != nil {
			t.Fatal(err)
		}
		var got inventory.Item
		var err error
		if n := rt.roundTrips(func() { got, err = s.SetQuantity(ctx, 1, 2) }); n != 2 || err != nil {
			t.Errorf("SetQuantity = %v: %d round trips, want 2", err, n)
		}
		if want := (inventory.Item{PetID: 1, Quantity: 2, Status: inventory.StatusPending}); got != want {
			t.Errorf("SetQuantity = %+v, want %+v", got, want)
		}
		if n := rt.roundTrips(func() { _, err = s.SetQuantity(ctx, 2, 2) }); n != 2 || !errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("SetQuantity of a pet with no entry = %v: %d round trips, want not found in 2", err, n)
		}
	})
}

// TestSetQuantityLeavesNoWatch: an update that ends without EXEC (no
// entry, a corrupt entry) releases its WATCH, so that the next
// transaction on the same pooled connection is not aborted by a write of
// that guard.
func TestSetQuantityLeavesNoWatch(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		opts := *c.Options()
		opts.PoolSize, opts.MaxActiveConns = 1, 1 // one connection for every transaction
		one := redis.NewClient(&opts)
		t.Cleanup(func() { _ = one.Close() })
		s := newTestStore(t, one, WithMaxRetries(0))
		other, err := New(c, WithKeyPrefix(s.KeyPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Put(ctx, inventory.Item{PetID: 10, Quantity: 1, Status: inventory.StatusSold}); err != nil {
			t.Fatal(err)
		}
		if err := c.HSet(ctx, s.itemsKey, "3", "corrupt").Err(); err != nil {
			t.Fatal(err)
		}
		for _, pet := range []int64{2, 3} {
			if _, err := s.SetQuantity(ctx, pet, 1); err == nil {
				t.Fatalf("SetQuantity(%d) succeeded, want it to fail", pet)
			}
			// Another process writes the guard the failed update watched.
			if err := other.Put(ctx, inventory.Item{PetID: pet, Quantity: 5, Status: inventory.StatusSold}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetQuantity(ctx, 10, int(pet)); err != nil {
				t.Fatalf("after SetQuantity(%d) failed, the next update on the same connection = %v: the failed one's WATCH stayed", pet, err)
			}
		}
	})
}
