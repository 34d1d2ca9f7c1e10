package memstore

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/petinventory/petinventory/inventory"
)

// logSize is how many changes the store remembers for ListChanges: a
// caller whose cursor is older than that many changes gets every entry
// instead. The bound keeps the log's memory small, and a server that lists
// at least once per logSize writes is always answered with the changes
// alone.
const logSize = 4096

// Store is an inventory.Store held in the memory of one process. The zero
// value is not usable; call New.
type Store struct {
	mu    sync.RWMutex
	items []inventory.Item // sorted by PetID
	index map[int64]int    // PetID → position in items

	// tag names this instance in its cursors, so that a cursor of another
	// instance (another process, or a store made again after a restart),
	// whose version numbers mean other states, is unknown here.
	tag string
	// version counts writes: the API holds the list of one version and asks
	// ListChanges for what changed since. It is bumped under mu, after the
	// write it counts (every write method does so last), and read without
	// it: a list that sees the old version while a write is in progress
	// answers with the state before that write, which is not acknowledged
	// yet.
	version atomic.Uint64
	// cursor is tag.version for the current version, made once per write
	// (under mu) rather than once per list.
	cursor string
	// log holds the last changes, oldest first from logStart, each with
	// the version of the write that made it; a write of several entries
	// logs several changes under one version.
	log      []loggedChange
	logStart int
	// floor is the oldest version whose changes since are all in log: a
	// cursor of a version below it gets every entry. Raised when a change
	// falls off the log and when a large Put replaces the log by a reset.
	floor uint64
}

// loggedChange is one entry of Store.log.
type loggedChange struct {
	version uint64
	change  inventory.Change
}

var (
	_ inventory.Store        = (*Store)(nil)
	_ inventory.ChangeLister = (*Store)(nil)
	_ inventory.Seeder       = (*Store)(nil)
)

// New returns a store holding the given items, which are checked as
// Service.Put checks them (inventory.ValidateItems): each a valid entry, no
// pet twice.
func New(items ...inventory.Item) (*Store, error) {
	if err := inventory.ValidateItems(items...); err != nil {
		return nil, err
	}
	s := &Store{
		index: make(map[int64]int, len(items)),
		tag:   strconv.FormatUint(rand.Uint64(), 36),
	}
	s.floor = 1
	s.bump(1)
	if len(items) > 0 {
		s.put(items)
	}
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

// ListChanges implements inventory.ChangeLister. A cursor of the current
// version is answered without the lock and without allocating (it is
// returned as is); one within the last changes the store remembers gets
// those changes, as each write left its entry; any other ("", another
// instance's, one older than the log, or not a cursor at all) gets every
// entry. Both are taken under one read lock: the state they lead to is the
// one the store holds at that instant.
func (s *Store) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Changes{}, err
	}
	v, known := s.parseCursor(since)
	// Unchanged, without the lock: see the comment on version.
	if known && v == s.version.Load() {
		return inventory.Changes{Cursor: since}, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.version.Load()
	switch {
	case known && v == now:
		return inventory.Changes{Cursor: since}, nil
	case known && v >= s.floor && v < now:
		return inventory.Changes{Cursor: s.cursor, Log: s.changesSince(v)}, nil
	}
	items := make([]inventory.Item, len(s.items))
	copy(items, s.items)
	return inventory.Changes{Cursor: s.cursor, Full: true, Items: items}, nil
}

// parseCursor returns the version a cursor of this instance names, and
// whether it is one: the tag, a dot, and the version in canonical decimal
// (no sign, no leading zero), as bump writes it. It does not allocate on
// the cursors the store issues (strconv allocates only for its errors).
func (s *Store) parseCursor(c string) (uint64, bool) {
	n := len(s.tag)
	if len(c) < n+2 || c[:n] != s.tag || c[n] != '.' {
		return 0, false
	}
	digits := c[n+1:]
	if len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 64) // no sign, no underscores in base 10
	return v, err == nil
}

// changesSince returns the logged changes of the versions after v, oldest
// first. The caller holds mu and has checked v >= floor.
func (s *Store) changesSince(v uint64) []inventory.Change {
	n := len(s.log)
	// The log is ordered by version: find the first change after v by a
	// binary search over its logical positions.
	first := sort.Search(n, func(i int) bool { return s.log[(s.logStart+i)%n].version > v })
	out := make([]inventory.Change, 0, n-first)
	for i := first; i < n; i++ {
		out = append(out, s.log[(s.logStart+i)%n].change)
	}
	return out
}

// record logs one change of the write that will be version v. The caller
// holds mu.
func (s *Store) record(v uint64, c inventory.Change) {
	if len(s.log) < logSize {
		s.log = append(s.log, loggedChange{version: v, change: c})
		return
	}
	// Full: the oldest change falls off, and with it every cursor of a
	// version before it.
	old := s.log[s.logStart]
	s.log[s.logStart] = loggedChange{version: v, change: c}
	s.logStart = (s.logStart + 1) % logSize
	s.floor = max(s.floor, old.version)
}

// reset forgets the log: every cursor before version v gets every entry.
// The caller holds mu.
func (s *Store) reset(v uint64) {
	s.log = s.log[:0]
	s.logStart = 0
	s.floor = v
}

// bump makes v the current version, last of a write: see the comment on
// version. The caller holds mu.
func (s *Store) bump(v uint64) {
	s.cursor = s.tag + "." + strconv.FormatUint(v, 10)
	s.version.Store(v)
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
	v := s.version.Load() + 1
	s.record(v, inventory.Change{Item: s.items[i]})
	s.bump(v)
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

// put writes items as one version. A put of more than a quarter of the log
// (seeding, say) resets the log instead of logging each entry: holders of
// older cursors read every entry once, which costs what reading that many
// changes would, and the log keeps its bound.
func (s *Store) put(items []inventory.Item) {
	v := s.version.Load() + 1
	logged := len(items) <= logSize/4
	if !logged {
		s.reset(v)
	}
	added := false
	for _, it := range items {
		if logged {
			s.record(v, inventory.Change{Item: it})
		}
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
	s.bump(v)
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
	v := s.version.Load() + 1
	s.record(v, inventory.Change{Item: inventory.Item{PetID: petID}, Deleted: true})
	s.bump(v)
	return nil
}
