package memstore

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/petinventory/petinventory/inventory"
)

// Store is an inventory.Store held in the memory of one process. The zero
// value is not usable; call New.
type Store struct {
	mu    sync.RWMutex
	items []inventory.Item // sorted by PetID
	index map[int64]int    // PetID → position in items
	// version counts writes, for ListSince: the API serves its cached
	// encoding of the list while it is unchanged. Bumped under mu, after
	// the write it counts (every write method does so last), and read
	// without it: a list that sees the old version while a write is in
	// progress answers with the state before that write, which is not
	// acknowledged yet.
	version atomic.Uint64
}

var (
	_ inventory.Store  = (*Store)(nil)
	_ inventory.Seeder = (*Store)(nil)
)

// New returns a store holding the given items, which are checked as
// Service.Put checks them (inventory.ValidateItems): each a valid entry, no
// pet twice.
func New(items ...inventory.Item) (*Store, error) {
	if err := inventory.ValidateItems(items...); err != nil {
		return nil, err
	}
	s := &Store{index: make(map[int64]int, len(items))}
	s.version.Store(1)
	s.put(items)
	return s, nil
}

// List returns a copy of every entry by ascending PetID, taken under one
// read lock: a consistent snapshot.
func (s *Store) List(ctx context.Context) ([]inventory.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := make([]inventory.Item, len(s.items))
	copy(out, s.items)
	s.mu.RUnlock()
	return out, nil
}

// ListSince is List, skipped when the contents are those of version since.
func (s *Store) ListSince(ctx context.Context, since uint64) ([]inventory.Item, uint64, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, false, err
	}
	// Unchanged, without the lock: a write in progress has not bumped the
	// version yet, and is not acknowledged yet either, so answering with
	// the state before it is answering with a state the store held.
	if v := s.version.Load(); v == since {
		return nil, v, false, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.version.Load()
	if v == since {
		return nil, v, false, nil
	}
	out := make([]inventory.Item, len(s.items))
	copy(out, s.items)
	return out, v, true, nil
}

// SetQuantity replaces one pet's quantity under the write lock and returns
// the entry as it stands after this write.
func (s *Store) SetQuantity(ctx context.Context, petID int64, quantity int) (inventory.Item, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Item{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[petID]
	if !ok {
		return inventory.Item{}, inventory.ErrNotFound
	}
	s.items[i].Quantity = quantity
	s.version.Add(1)
	return s.items[i], nil
}

// PutIfEmpty writes items only when the store holds no entry, under one
// lock: atomic (inventory.Seeder).
func (s *Store) PutIfEmpty(ctx context.Context, items ...inventory.Item) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.items) > 0 {
		return false, nil
	}
	s.put(items)
	return true, nil
}

// Put creates or replaces entries, all under one lock: atomic.
func (s *Store) Put(ctx context.Context, items ...inventory.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(items)
	return nil
}

func (s *Store) put(items []inventory.Item) {
	added := false
	for _, it := range items {
		if i, ok := s.index[it.PetID]; ok {
			s.items[i] = it
			continue
		}
		s.items = append(s.items, it)
		s.index[it.PetID] = len(s.items) - 1
		added = true
	}
	if added {
		sort.Slice(s.items, func(i, j int) bool { return s.items[i].PetID < s.items[j].PetID })
		s.reindex()
	}
	s.version.Add(1)
}

func (s *Store) reindex() {
	for i, it := range s.items {
		s.index[it.PetID] = i
	}
}

// Delete removes one entry.
func (s *Store) Delete(ctx context.Context, petID int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[petID]
	if !ok {
		return inventory.ErrNotFound
	}
	s.items = append(s.items[:i], s.items[i+1:]...)
	delete(s.index, petID)
	s.reindex()
	s.version.Add(1)
	return nil
}
