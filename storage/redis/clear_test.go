package redisstore

import (
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// Clear removes every key of its own prefix and nothing else.
func TestClearDeletesOnlyItsPrefix(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		mine, other := newTestStore(t, c), newTestStore(t, c)
		for _, s := range []*Store{mine, other} {
			if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 2, Status: inventory.StatusSold},
				inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusPending}); err != nil {
				t.Fatal(err)
			}
		}
		unrelated := "unrelated-" + uniquePrefix(t)
		if err := c.Set(ctx, unrelated, "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		defer c.Del(ctx, unrelated)

		if err := mine.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		if keys, _ := c.Keys(ctx, "{"+mine.KeyPrefix()+"}:*").Result(); len(keys) != 0 {
			t.Errorf("keys left under the cleared prefix: %v", keys)
		}
		if items, err := other.List(ctx); err != nil || len(items) != 2 {
			t.Errorf("the other store after Clear: %v %v; want its 2 items", items, err)
		}
		if n, _ := c.Exists(ctx, unrelated).Result(); n != 1 {
			t.Error("Clear deleted a key outside its prefix")
		}
	})
}
