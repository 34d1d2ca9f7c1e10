package memstore

import (
	"context"

	"github.com/petinventory/petinventory/inventory"
)

// This file is the transition from inventory.VersionedLister to
// inventory.ChangeLister: it goes when VersionedLister leaves package
// inventory (its API and tests still call ListSince until then).

var _ inventory.VersionedLister = (*Store)(nil)

// ListSince is List, skipped when the contents are those of version since.
// Use ListChanges: ListSince goes with inventory.VersionedLister (not
// marked deprecated meanwhile, so that its last callers stay lint-clean).
func (s *Store) ListSince(ctx context.Context, since uint64) ([]inventory.Item, uint64, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, false, err
	}
	// Unchanged, without the lock: see the comment on Store.version.
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
