package storetest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// broken is a memstore with one method replaced by a faulty one, to prove
// that each check fails on a store that breaks its rule.
type broken struct {
	*memstore.Store
	list   func(s *memstore.Store, ctx context.Context) ([]inventory.Item, error)
	set    func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error)
	put    func(s *memstore.Store, ctx context.Context, items ...inventory.Item) error
	delete func(s *memstore.Store, ctx context.Context, id int64) error
	since  func(s *memstore.Store, ctx context.Context, v uint64) ([]inventory.Item, uint64, bool, error)
}

func (b *broken) ListSince(ctx context.Context, v uint64) ([]inventory.Item, uint64, bool, error) {
	if b.since != nil {
		return b.since(b.Store, ctx, v)
	}
	return b.Store.ListSince(ctx, v)
}

func (b *broken) List(ctx context.Context) ([]inventory.Item, error) {
	if b.list != nil {
		return b.list(b.Store, ctx)
	}
	return b.Store.List(ctx)
}

func (b *broken) SetQuantity(ctx context.Context, id int64, q int) (inventory.Item, error) {
	if b.set != nil {
		return b.set(b.Store, ctx, id, q)
	}
	return b.Store.SetQuantity(ctx, id, q)
}

func (b *broken) Put(ctx context.Context, items ...inventory.Item) error {
	if b.put != nil {
		return b.put(b.Store, ctx, items...)
	}
	return b.Store.Put(ctx, items...)
}

func (b *broken) Delete(ctx context.Context, id int64) error {
	if b.delete != nil {
		return b.delete(b.Store, ctx, id)
	}
	return b.Store.Delete(ctx, id)
}

func newMem(t *testing.T) *memstore.Store {
	t.Helper()
	s, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestChecksPassOnMemstore(t *testing.T) {
	Run(t, func(t *testing.T) inventory.Store { return newMem(t) })
}

func TestChecksCatchBrokenStores(t *testing.T) {
	var tornCalls atomic.Int64
	cases := []struct {
		name  string
		check string // the check that must fail
		b     broken
	}{
		{"ListReversed", "ListOrder", broken{list: func(s *memstore.Store, ctx context.Context) ([]inventory.Item, error) {
			items, err := s.List(ctx)
			slices.Reverse(items)
			return items, err
		}}},
		{"ListLexical", "ListOrder", broken{list: func(s *memstore.Store, ctx context.Context) ([]inventory.Item, error) {
			items, err := s.List(ctx)
			slices.SortFunc(items, func(a, b inventory.Item) int {
				x, y := strconv.FormatInt(a.PetID, 10), strconv.FormatInt(b.PetID, 10)
				if x < y {
					return -1
				}
				return 1
			})
			return items, err
		}}},
		{"ListNotEmpty", "ListEmpty", broken{list: func(s *memstore.Store, ctx context.Context) ([]inventory.Item, error) {
			items, err := s.List(ctx)
			return append(items, inventory.Item{PetID: 1, Status: inventory.StatusSold}), err
		}}},
		{"PutAppendsDuplicates", "PutReplaceIdempotent", broken{put: func(s *memstore.Store, ctx context.Context, items ...inventory.Item) error {
			for _, it := range items {
				if _, err := s.SetQuantity(ctx, it.PetID, it.Quantity); err == nil {
					// Keeps the old status instead of replacing it.
					continue
				}
				if err := s.Put(ctx, it); err != nil {
					return err
				}
			}
			return nil
		}}},
		{"PutOfNothingFails", "PutReplaceIdempotent", broken{put: func(s *memstore.Store, ctx context.Context, items ...inventory.Item) error {
			if len(items) == 0 {
				return errors.New("nothing to put")
			}
			return s.Put(ctx, items...)
		}}},
		{"SetQuantityResetsStatus", "SetQuantity", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			it, err := s.SetQuantity(ctx, id, q)
			if err == nil {
				it.Status = inventory.StatusAvailable
				err = s.Put(ctx, it)
			}
			return it, err
		}}},
		{"SetQuantityReturnsOldValue", "SetQuantity", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			items, _ := s.List(ctx)
			it, err := s.SetQuantity(ctx, id, q)
			for _, old := range items {
				if old.PetID == id {
					it.Quantity = old.Quantity
				}
			}
			return it, err
		}}},
		{"SetQuantityCreates", "SetQuantityNotFound", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			it, err := s.SetQuantity(ctx, id, q)
			if errors.Is(err, inventory.ErrNotFound) {
				_ = s.Put(ctx, inventory.Item{PetID: id, Quantity: q, Status: inventory.StatusAvailable})
			}
			return it, err
		}}},
		{"SetQuantityNotFoundAsPlainError", "SetQuantityNotFound", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			it, err := s.SetQuantity(ctx, id, q)
			if err != nil {
				err = errors.New("no such pet")
			}
			return it, err
		}}},
		{"DeleteMissingSucceeds", "Delete", broken{delete: func(s *memstore.Store, ctx context.Context, id int64) error {
			if err := s.Delete(ctx, id); !errors.Is(err, inventory.ErrNotFound) {
				return err
			}
			return nil
		}}},
		{"DeleteDoesNothing", "Delete", broken{delete: func(s *memstore.Store, ctx context.Context, id int64) error {
			return nil // never deletes
		}}},
		{"IgnoresContext", "ContextDone", broken{
			list: func(s *memstore.Store, _ context.Context) ([]inventory.Item, error) {
				return s.List(context.Background())
			},
		}},
		{"WritesThenReportsCancel", "ContextDone", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			it, err := s.SetQuantity(context.Background(), id, q)
			if err == nil {
				err = ctx.Err()
			}
			return it, err
		}}},
		{"CancelAsNotFound", "ContextDone", broken{delete: func(s *memstore.Store, ctx context.Context, id int64) error {
			if ctx.Err() != nil {
				return inventory.ErrNotFound
			}
			return s.Delete(ctx, id)
		}}},
		{"LosesLastWrite", "ConcurrentUpdates", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			if id != 1<<40 && q == 20 { // the last write of each writer to its own pet
				items, _ := s.List(ctx)
				for _, it := range items {
					if it.PetID == id {
						return inventory.Item{PetID: id, Quantity: q, Status: it.Status}, nil
					}
				}
			}
			return s.SetQuantity(ctx, id, q)
		}}},
		{"UpdateFailsUnderLoad", "ConcurrentUpdates", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			if q == 10 {
				return inventory.Item{}, inventory.ErrUnavailable
			}
			return s.SetQuantity(ctx, id, q)
		}}},
		{"TornListing", "ConcurrentUpdates", broken{list: func(s *memstore.Store, ctx context.Context) ([]inventory.Item, error) {
			items, err := s.List(ctx)
			if tornCalls.Add(1) > 1 && len(items) > 0 {
				items[len(items)-1].Status = inventory.StatusSold // the hot pet is pending
			}
			return items, err
		}}},
		{"PlainErrorWhileOthersChange", "ConcurrentPutDelete", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			if q == 10 {
				return inventory.Item{}, errors.New("boom")
			}
			return s.SetQuantity(ctx, id, q)
		}}},
		{"AlwaysUnavailableWhileOthersChange", "ConcurrentPutDelete", broken{set: func(s *memstore.Store, ctx context.Context, id int64, q int) (inventory.Item, error) {
			return inventory.Item{}, inventory.ErrUnavailable
		}}},
		{"DeletedPetStillListed", "ConcurrentPutDelete", broken{delete: func(s *memstore.Store, ctx context.Context, id int64) error {
			if id == 35 {
				return nil // claims success, keeps the entry
			}
			return s.Delete(ctx, id)
		}}},
		{"ListSinceNeverChanges", "ListSince", broken{since: func(s *memstore.Store, ctx context.Context, v uint64) ([]inventory.Item, uint64, bool, error) {
			if v == 0 {
				items, err := s.List(ctx)
				return items, 1, true, err
			}
			return nil, 1, false, nil
		}}},
		{"ListSinceVersionZero", "ListSince", broken{since: func(s *memstore.Store, ctx context.Context, v uint64) ([]inventory.Item, uint64, bool, error) {
			items, _, changed, err := s.ListSince(ctx, v)
			return items, 0, changed, err
		}}},
		{"ListSinceOtherItems", "ListSince", broken{since: func(s *memstore.Store, ctx context.Context, v uint64) ([]inventory.Item, uint64, bool, error) {
			items, version, changed, err := s.ListSince(ctx, v)
			slices.Reverse(items)
			return items, version, changed, err
		}}},
		{"ListSinceItemsWhenUnchanged", "ListSince", broken{since: func(s *memstore.Store, ctx context.Context, v uint64) ([]inventory.Item, uint64, bool, error) {
			_, version, changed, err := s.ListSince(ctx, v)
			items, _ := s.List(ctx)
			return items, version, changed, err
		}}},
		{"ListSinceIgnoresContext", "ListSince", broken{since: func(s *memstore.Store, _ context.Context, v uint64) ([]inventory.Item, uint64, bool, error) {
			return s.ListSince(context.Background(), v)
		}}},
	}
	cfg := Config{Writers: 4, Updates: 20}.withDefaults()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ck *check
			for i := range checks {
				if checks[i].name == tc.check {
					ck = &checks[i]
				}
			}
			if ck == nil {
				t.Fatalf("no check named %q", tc.check)
			}
			tornCalls.Store(0)
			b := tc.b
			b.Store = newMem(t)
			err := ck.fn(t.Context(), &b, cfg, t.Logf)
			if err == nil {
				t.Fatalf("check %s passed on a store that breaks it", tc.check)
			}
			t.Logf("check %s failed as it should: %v", tc.check, err)
		})
	}
}

func TestRunConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.Writers != 8 || c.Updates != 100 || c.Timeout <= 0 {
		t.Fatalf("defaults = %+v", c)
	}
	c = Config{Writers: 32, Updates: 200, Timeout: 5}.withDefaults()
	if c.Writers != 32 || c.Updates != 200 || c.Timeout != 5 {
		t.Fatalf("explicit values replaced: %+v", c)
	}
}
