package storetest

//lint:file-ignore ST1005 failure messages begin with the name of the Store method they are about (ListSince, Put).

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/petinventory/petinventory/inventory"
)

// checkListSince checks a store that implements the optional
// inventory.VersionedLister: the version is never 0 and changes with every
// write, an unchanged version returns no items, and a changed one returns
// what List returns. A store without the interface passes.
func checkListSince(ctx context.Context, s inventory.Store, _ Config, log logf) error {
	vl, ok := s.(inventory.VersionedLister)
	if !ok {
		log("the store does not implement inventory.VersionedLister: nothing to check")
		return nil
	}
	var version uint64
	// step checks the state after a write: a new version whose items are
	// List's, then no items for that same version.
	step := func(when string) error {
		items, v, changed, err := vl.ListSince(ctx, version)
		if err != nil {
			return fmt.Errorf("%s: ListSince(%d): %w", when, version, err)
		}
		if v == 0 {
			return fmt.Errorf("%s: ListSince returned version 0, which is never a version", when)
		}
		if !changed || v == version {
			return fmt.Errorf("%s: ListSince(%d) = version %d, changed %v; want a new version after a write", when, version, v, changed)
		}
		list, err := s.List(ctx)
		if err != nil {
			return fmt.Errorf("%s: List: %w", when, err)
		}
		if len(items) != len(list) || !slices.Equal(items, list) {
			return fmt.Errorf("%s: ListSince returned %+v, List %+v; want the same entries", when, items, list)
		}
		version = v
		again, v2, changed, err := vl.ListSince(ctx, version)
		switch {
		case err != nil:
			return fmt.Errorf("%s: ListSince(%d) of the current version: %w", when, version, err)
		case changed || v2 != version || again != nil:
			return fmt.Errorf("%s: ListSince(%d) of the current version = %d items, version %d, changed %v; want no items, the same version, unchanged", when, version, len(again), v2, changed)
		}
		return nil
	}
	if err := step("empty store"); err != nil {
		return err
	}
	a := inventory.Item{PetID: 4, Quantity: 1, Status: inventory.StatusPending}
	if err := s.Put(ctx, a, inventory.Item{PetID: -4, Quantity: 2, Status: inventory.StatusSold}); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if err := step("after Put"); err != nil {
		return err
	}
	if err := s.Put(ctx, a); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if err := step("after a Put of the same item"); err != nil {
		return err
	}
	if _, err := s.SetQuantity(ctx, a.PetID, 9); err != nil {
		return fmt.Errorf("SetQuantity: %w", err)
	}
	if err := step("after SetQuantity"); err != nil {
		return err
	}
	if err := s.Delete(ctx, -4); err != nil {
		return fmt.Errorf("Delete: %w", err)
	}
	if err := step("after Delete"); err != nil {
		return err
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := vl.ListSince(cancelled, 0); err == nil ||
		!errors.Is(err, context.Canceled) && !errors.Is(err, inventory.ErrUnavailable) {
		return fmt.Errorf("ListSince with a context cancelled returned %v, want an error matching context.Canceled or inventory.ErrUnavailable", err)
	}
	return nil
}
