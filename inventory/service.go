package inventory

import (
	"context"
	"errors"
)

// Service holds the business rules of the inventory over a Store: what a
// valid quantity and a valid entry are. The HTTP layer calls it, and Go
// code (seeding, administration) can call it directly to get the same
// checks.
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

// SetQuantity replaces the stock count of one pet and returns the entry as
// stored. A quantity outside 0..MaxQuantity is an invalid_field error; a pet
// with no entry is an error matching ErrNotFound.
func (s *Service) SetQuantity(ctx context.Context, petID int64, quantity int) (Item, error) {
	if quantity < 0 || quantity > MaxQuantity {
		return Item{}, Errorf(CodeInvalidField, "quantity must be between 0 and %d", MaxQuantity)
	}
	return s.store.SetQuantity(ctx, petID, quantity)
}

// Put creates or replaces entries after checking each one (Item.Validate)
// and that no pet appears twice; nothing is written when any is invalid.
func (s *Service) Put(ctx context.Context, items ...Item) error {
	seen := make(map[int64]struct{}, len(items))
	for _, it := range items {
		if err := it.Validate(); err != nil {
			return err
		}
		if _, dup := seen[it.PetID]; dup {
			return Errorf(CodeInvalidField, "item %d appears more than once", it.PetID)
		}
		seen[it.PetID] = struct{}{}
	}
	if len(items) == 0 {
		return nil
	}
	return s.store.Put(ctx, items...)
}

// Delete removes the entry of one pet; an error matching ErrNotFound when
// there is none.
func (s *Service) Delete(ctx context.Context, petID int64) error {
	return s.store.Delete(ctx, petID)
}
