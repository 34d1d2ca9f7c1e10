package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/storetest"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, storetest.Config{
		NewStore: func(t *testing.T) inventory.Store {
			s, err := memstore.New()
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		// NewInstance and LoseLog stay nil: a memstore is one process, and
		// its log lives and dies with its entries.
		TrimLog: outrunLog,
	})
}

// outrunLog trims s's log as writes outrun it: one write more than the log
// holds, each changing nothing (a quantity set to itself) or, in an empty
// store, a pet put and deleted.
func outrunLog(ctx context.Context, st inventory.Store) error {
	s := st.(*memstore.Store)
	items, err := s.List(ctx)
	if err != nil {
		return err
	}
	for range memstore.LogSize + 1 {
		if len(items) > 0 {
			_, err = s.SetQuantity(ctx, items[0].PetID, items[0].Quantity)
		} else if err = s.Put(ctx, inventory.Item{PetID: 1, Status: inventory.StatusSold}); err == nil {
			err = s.Delete(ctx, 1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func TestNewHoldsItsItemsSorted(t *testing.T) {
	s, err := memstore.New(
		inventory.Item{PetID: 2, Quantity: 20, Status: inventory.StatusSold},
		inventory.Item{PetID: -7, Quantity: 1, Status: inventory.StatusPending},
	)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []inventory.Item{{PetID: -7, Quantity: 1, Status: inventory.StatusPending}, {PetID: 2, Quantity: 20, Status: inventory.StatusSold}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
}

func TestNewRejectsInvalidItems(t *testing.T) {
	for _, it := range []inventory.Item{
		{PetID: 1, Quantity: -1, Status: inventory.StatusAvailable},
		{PetID: 1, Quantity: inventory.MaxQuantity + 1, Status: inventory.StatusAvailable},
		{PetID: 1, Quantity: 1, Status: "lost"},
		{PetID: 1, Quantity: 1, Status: ""},
	} {
		s, err := memstore.New(inventory.Item{PetID: 0, Quantity: 1, Status: inventory.StatusSold}, it)
		var e *inventory.Error
		if s != nil || !errors.As(err, &e) || e.Code() != inventory.CodeInvalidField {
			t.Errorf("New(..., %+v) = %v, %v; want nil and an invalid_field error", it, s, err)
		}
	}
}

// ExampleNew seeds a store and updates one pet, as a service's startup
// and an HTTP request would.
func ExampleNew() {
	s, err := memstore.New(
		inventory.Item{PetID: 2, Quantity: 5, Status: inventory.StatusAvailable},
		inventory.Item{PetID: 1, Quantity: 0, Status: inventory.StatusSold},
	)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	it, err := s.SetQuantity(ctx, 2, 4)
	fmt.Println(it, err)
	_, err = s.SetQuantity(ctx, 3, 1)
	fmt.Println(errors.Is(err, inventory.ErrNotFound))
	items, _ := s.List(ctx)
	fmt.Println(items)
	// Output:
	// {2 4 available} <nil>
	// true
	// [{1 0 sold} {2 4 available}]
}
