package inventory

import (
	"context"
	"errors"
	"fmt"
)

// Service holds the business rules of the inventory over a Store: what a
// valid quantity and a valid entry are, and that a list is never nil. It is
// the one way to the store: the HTTP layer calls it and nothing else, and
// Go code (seeding, administration) calls it to get the same checks, so
// stores trust what they are given. An API's Service is API.Service.
type Service struct {
	store Store
}

// NewService returns a Service over store.
func NewService(store Store) (*Service, error) {
	if store == nil {
		return nil, errors.New("inventory: NewService: store is nil")
	}
	return &Service{store: store}, nil
}

// List returns every entry by ascending pet id; never a nil slice.
func (s *Service) List(ctx context.Context) ([]Item, error) {
	items, err := s.store.List(ctx)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []Item{}
	}
	return items, nil
}

// listChanges is what changed since the state named by since, through
// the store's ChangeLister when it has one; any other store is listed
// whole (Full, with the cursor "", which names no state).
func (s *Service) listChanges(ctx context.Context, since string) (Changes, error) {
	cl, ok := s.store.(ChangeLister)
	if !ok {
		items, err := s.store.List(ctx)
		return Changes{Full: true, Items: items}, err
	}
	return cl.ListChanges(ctx, since)
}

// SetQuantity replaces the stock count of one pet and returns the entry as
// stored. A quantity outside 0..MaxQuantity is an invalid_field error; a pet
// with no entry is an error matching ErrNotFound.
func (s *Service) SetQuantity(ctx context.Context, petID int64, quantity int) (Item, error) {
	if quantity < 0 || quantity > MaxQuantity {
		return Item{}, newError(CodeInvalidField, "quantity must be between 0 and %d", MaxQuantity)
	}
	return s.store.SetQuantity(ctx, petID, quantity)
}

// Put creates or replaces entries after checking them (ValidateItems);
// nothing is written when any is invalid.
func (s *Service) Put(ctx context.Context, items ...Item) error {
	if err := ValidateItems(items...); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	return s.store.Put(ctx, items...)
}

// PutIfEmpty writes items only into a store that holds no entry at all,
// atomically, after checking them as Put does, and reports whether it
// wrote them: seeding that replicas starting together do once and that a
// restart never repeats over real stock. The store must implement Seeder
// (memstore and redisstore do); otherwise it writes nothing and returns an
// error matching errors.ErrUnsupported.
func (s *Service) PutIfEmpty(ctx context.Context, items ...Item) (bool, error) {
	if err := ValidateItems(items...); err != nil {
		return false, err
	}
	sd, ok := s.store.(Seeder)
	if !ok {
		return false, fmt.Errorf("inventory: PutIfEmpty: the store (%T) cannot seed atomically: it does not implement inventory.Seeder: %w", s.store, errors.ErrUnsupported)
	}
	return sd.PutIfEmpty(ctx, items...)
}

// ValidateItems reports, as an invalid_field error naming the pet, the
// first item that is not an entry a store may hold (Item.Validate) or
// whose pet appears twice. Service.Put runs it; so does any other way of
// seeding a store (a backend's atomic seeding, a constructor that takes
// items), so that the rule stays one.
func ValidateItems(items ...Item) error {
	seen := make(map[int64]struct{}, len(items))
	for _, it := range items {
		if err := it.Validate(); err != nil {
			return err
		}
		if _, dup := seen[it.PetID]; dup {
			return newError(CodeInvalidField, "item %d appears more than once", it.PetID)
		}
		seen[it.PetID] = struct{}{}
	}
	return nil
}

// Delete removes the entry of one pet; an error matching ErrNotFound when
// there is none.
func (s *Service) Delete(ctx context.Context, petID int64) error {
	return s.store.Delete(ctx, petID)
}
