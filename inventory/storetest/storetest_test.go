package storetest

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
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
	// changes replaces ListChanges.
	changes func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error)
	// seed replaces PutIfEmpty.
	seed func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error)
	// log, when set, makes the store under test a logStore with these
	// faults instead: the faults of a log shared by instances.
	log *logFaults
}

func (b *broken) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if b.changes != nil {
		return b.changes(b.Store, ctx, since)
	}
	return b.Store.ListChanges(ctx, since)
}

func (b *broken) PutIfEmpty(ctx context.Context, items ...inventory.Item) (bool, error) {
	if b.seed != nil {
		return b.seed(b.Store, ctx, items...)
	}
	return b.Store.PutIfEmpty(ctx, items...)
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
	Run(t, Config{
		NewStore: func(t *testing.T) inventory.Store { return newMem(t) },
		TrimLog:  trimByWriting,
	})
}

// trimByWriting outruns the log of a store that keeps a bounded one
// (memstore) by writing until a cursor from before gets every entry: a
// write that changes nothing (a quantity set to itself), or, in an empty
// store, a pet put and deleted.
func trimByWriting(ctx context.Context, s inventory.Store) error {
	cl := s.(inventory.ChangeLister)
	start, err := cl.ListChanges(ctx, "")
	if err != nil {
		return err
	}
	items, err := s.List(ctx)
	if err != nil {
		return err
	}
	for i := 1; i <= 1<<16; i++ {
		if len(items) > 0 {
			_, err = s.SetQuantity(ctx, items[0].PetID, items[0].Quantity)
		} else if err = s.Put(ctx, inventory.Item{PetID: 1, Status: inventory.StatusSold}); err == nil {
			err = s.Delete(ctx, 1)
		}
		if err != nil {
			return err
		}
		if i%256 != 0 {
			continue
		}
		ch, err := cl.ListChanges(ctx, start.Cursor)
		if err != nil {
			return err
		}
		if ch.Full {
			return nil
		}
	}
	return errors.New("the log still holds the cursor before 65536 writes")
}

func TestChecksPassOnLogStore(t *testing.T) {
	Run(t, logStoreConfig(logFaults{}))
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
		{"ListChangesDropsLogEntry", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if len(ch.Log) > 0 {
				ch.Log = ch.Log[1:]
			}
			return ch, err
		}}},
		{"ListChangesStaleFull", "ListChanges", broken{changes: func() func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			var first []inventory.Item
			var cached bool
			return func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
				ch, err := s.ListChanges(ctx, since)
				if ch.Full {
					if !cached {
						first, cached = ch.Items, true
					}
					ch.Items = first // the entries of the first answer, with the current cursor
				}
				return ch, err
			}
		}()}},
		{"ListChangesUnchangedAsFull", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if err == nil && !ch.Full && len(ch.Log) == 0 {
				return s.ListChanges(ctx, "")
			}
			return ch, err
		}}},
		{"ListChangesEmptyCursor", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if len(ch.Log) == 0 && !ch.Full {
				ch.Cursor = ""
			}
			return ch, err
		}}},
		{"ListChangesGarbageCursorFails", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if ch.Full && since != "" {
				return inventory.Changes{}, errors.New("malformed cursor")
			}
			return ch, err
		}}},
		{"ListChangesGarbageCursorAsUnchanged", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if ch.Full && since != "" {
				return inventory.Changes{Cursor: since}, err
			}
			return ch, err
		}}},
		{"ListChangesIgnoresContext", "ListChanges", broken{changes: func(s *memstore.Store, _ context.Context, since string) (inventory.Changes, error) {
			return s.ListChanges(context.Background(), since)
		}}},
		{"ListChangesTornFull", "ListChangesSnapshot", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if err != nil || !ch.Full {
				return ch, err
			}
			// Every entry in two reads, as a chunked read without a log
			// to replay would: not one state.
			runtime.Gosched()
			rest, err := s.List(ctx)
			half := len(ch.Items) / 2
			if len(rest) > half {
				ch.Items = append(ch.Items[:half:half], rest[half:]...)
			}
			return ch, err
		}}},
		{"ListChangesCursorAfterLog", "ListChangesSnapshot", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if err != nil || ch.Full {
				return ch, err
			}
			// The cursor of a second call: the writes between the two
			// are in neither answer.
			runtime.Gosched()
			later, err := s.ListChanges(ctx, since)
			ch.Cursor = later.Cursor
			return ch, err
		}}},
		{"ListChangesFullWithLog", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if ch.Full {
				ch.Log = []inventory.Change{{Item: inventory.Item{PetID: 1}, Deleted: true}}
			}
			return ch, err
		}}},
		{"ListChangesFullUnsorted", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			slices.Reverse(ch.Items)
			return ch, err
		}}},
		{"ListChangesItemsWithoutFull", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			if !ch.Full {
				ch.Items, _ = s.List(ctx)
			}
			if !ch.Full && len(ch.Items) == 0 {
				ch.Items = []inventory.Item{{PetID: 1, Status: inventory.StatusSold}}
			}
			return ch, err
		}}},
		{"ListChangesDeleteWithStatus", "ListChanges", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			ch, err := s.ListChanges(ctx, since)
			for i := range ch.Log {
				if ch.Log[i].Deleted {
					ch.Log[i].Status = inventory.StatusSold
				}
			}
			return ch, err
		}}},
		{"ListChangesFullGoesBack", "ListChangesSnapshot", broken{changes: func() func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			var mu sync.Mutex
			var older, last inventory.Changes
			calls := 0
			return func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
				ch, err := s.ListChanges(ctx, since)
				if err != nil || since != "" {
					return ch, err
				}
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls%3 == 0 {
					return older, nil // the answer before last, held too long
				}
				older, last = last, ch
				return ch, nil
			}
		}()}},
		{"ListChangesFailsUnderWrites", "ListChangesSnapshot", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			if len(since) > 0 && tornCalls.Add(1) == 5 {
				return inventory.Changes{}, inventory.ErrUnavailable
			}
			return s.ListChanges(ctx, since)
		}}},
		{"SeedOverEntries", "PutIfEmpty", broken{seed: func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error) {
			return true, s.Put(ctx, items...)
		}}},
		{"SeedReportsFalse", "PutIfEmpty", broken{seed: func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error) {
			_, err := s.PutIfEmpty(ctx, items...)
			return false, err
		}}},
		{"SeedIgnoresContext", "PutIfEmpty", broken{seed: func(s *memstore.Store, _ context.Context, items ...inventory.Item) (bool, error) {
			return s.PutIfEmpty(context.Background(), items...)
		}}},
		{"SeedDropsPartOfALargeSeed", "PutIfEmpty", broken{seed: func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error) {
			return s.PutIfEmpty(ctx, items[:min(len(items), 500)]...) // a last chunk lost
		}}},
		{"ChangesMissTheSeed", "PutIfEmpty", broken{changes: func(s *memstore.Store, ctx context.Context, since string) (inventory.Changes, error) {
			if since != "" {
				return inventory.Changes{Cursor: since}, ctx.Err() // as if seeds bypassed the log
			}
			return s.ListChanges(ctx, since)
		}}},
		{"SeedCheckThenPut", "PutIfEmptyConcurrent", broken{seed: func() func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error) {
			var checked sync.WaitGroup
			var n atomic.Int64
			checked.Add(2) // the first two seeders see the store empty before either writes
			return func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error) {
				held, err := s.List(ctx)
				if err != nil || len(held) > 0 {
					return false, err
				}
				if n.Add(1) <= 2 {
					checked.Done()
					checked.Wait()
				}
				return true, s.Put(ctx, items...)
			}
		}()}},
		{"SeedNeverWritesUnderContention", "PutIfEmptyConcurrent", broken{seed: func(s *memstore.Store, ctx context.Context, items ...inventory.Item) (bool, error) {
			return false, nil
		}}},
		{"TrimLogFails", "ListChangesTrimmedLog", broken{log: &logFaults{failTrim: true}}},
		{"NewInstanceNil", "ListChangesTwoInstances", broken{log: &logFaults{nilInstance: true}}},
		{"SecondInstanceNoChangeLister", "ListChangesTwoInstances", broken{log: &logFaults{plainInstance: true}}},
		{"TrimmedCursorGetsWhatIsLeft", "ListChangesTrimmedLog", broken{log: &logFaults{ignoreTrim: true}}},
		{"LostLogPositionsTakenAsNew", "ListChangesLostLog", broken{log: &logFaults{ignoreEpoch: true}}},
		{"InstanceSeesOnlyItsOwnWrites", "ListChangesTwoInstances", broken{log: &logFaults{localOnly: true}}},
		{"PagesReadOnUnchecked", "ListChangesBetweenPages", broken{log: &logFaults{unlinked: true}}},
		{"BetweenPagesNeverRuns", "ListChangesBetweenPages", broken{log: &logFaults{onePage: true}}},
	}
	cfg := Config{Writers: 4, Updates: 20}.withDefaults()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ck *check
			for _, g := range groups {
				for i := range g.checks {
					if g.checks[i].name == tc.check {
						ck = &g.checks[i]
					}
				}
			}
			if ck == nil {
				t.Fatalf("no check named %q", tc.check)
			}
			tornCalls.Store(0)
			var s inventory.Store
			cfg := cfg
			if tc.b.log != nil {
				lc := logStoreConfig(*tc.b.log)
				s = lc.NewStore(t)
				cfg.TrimLog, cfg.LoseLog, cfg.BetweenPages = lc.TrimLog, lc.LoseLog, lc.BetweenPages
				cfg.instance = func(s inventory.Store) inventory.Store { return lc.NewInstance(t, s) }
			} else {
				b := tc.b
				b.Store = newMem(t)
				s = &b
			}
			err := ck.fn(t.Context(), s, cfg, t.Logf)
			if err == nil {
				t.Fatalf("check %s passed on a store that breaks it", tc.check)
			}
			t.Logf("check %s failed as it should: %v", tc.check, err)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.Writers != 8 || c.Updates != 100 || c.Timeout <= 0 || c.SnapshotPets != 3000 {
		t.Fatalf("defaults = %+v", c)
	}
	c = Config{Writers: 32, Updates: 200, Timeout: 5, SnapshotPets: 10}.withDefaults()
	if c.Writers != 32 || c.Updates != 200 || c.Timeout != 5 || c.SnapshotPets != 10 {
		t.Fatalf("explicit values replaced: %+v", c)
	}
}

// countingSeeder counts the calls of its PutIfEmpty.
type countingSeeder struct {
	*memstore.Store
	calls *atomic.Int64
}

func (c countingSeeder) PutIfEmpty(ctx context.Context, items ...inventory.Item) (bool, error) {
	c.calls.Add(1)
	return c.Store.PutIfEmpty(ctx, items...)
}

// Run checks an optional interface exactly when the store implements it.
func TestRunProbesOptionalInterfaces(t *testing.T) {
	var seeds atomic.Int64
	t.Run("Seeder", func(t *testing.T) {
		Run(t, Config{NewStore: func(t *testing.T) inventory.Store { return countingSeeder{newMem(t), &seeds} }})
	})
	if seeds.Load() == 0 {
		t.Error("Run never called PutIfEmpty of a store that implements inventory.Seeder")
	}
	seeds.Store(0)
	t.Run("Plain", func(t *testing.T) {
		// The Store interface hides PutIfEmpty and ListChanges.
		Run(t, Config{NewStore: func(t *testing.T) inventory.Store {
			return struct{ inventory.Store }{countingSeeder{newMem(t), &seeds}}
		}})
	})
	if n := seeds.Load(); n != 0 {
		t.Errorf("Run called PutIfEmpty %d times through a store that does not implement inventory.Seeder", n)
	}
}
