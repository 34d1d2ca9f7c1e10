package inventory_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

func TestItemValidate(t *testing.T) {
	valid := []inventory.Item{
		{PetID: 1, Quantity: 0, Status: inventory.StatusAvailable},
		{PetID: -1 << 63, Quantity: inventory.MaxQuantity, Status: inventory.StatusPending},
		{PetID: 1<<63 - 1, Quantity: 1, Status: inventory.StatusSold},
	}
	for _, it := range valid {
		if err := it.Validate(); err != nil {
			t.Errorf("%+v: %v", it, err)
		}
	}
	invalid := map[string]inventory.Item{
		"is outside":           {PetID: 1, Quantity: -1, Status: inventory.StatusSold},
		`status "Sold"`:        {PetID: 1, Quantity: 1, Status: "Sold"},
		`status ""`:            {PetID: 1, Quantity: 1},
		`status "available "`:  {PetID: 1, Quantity: 1, Status: "available "},
		"item 9: quantity -5 ": {PetID: 9, Quantity: -5, Status: "lost"},
	}
	for want, it := range invalid {
		err := it.Validate()
		var e *inventory.Error
		if !errors.As(err, &e) || e.Code() != inventory.CodeInvalidField || !strings.Contains(e.Message(), want) {
			t.Errorf("%+v: %v; want invalid_field naming %q", it, err, want)
		}
	}
}

func TestService(t *testing.T) {
	ctx := context.Background()
	if _, err := inventory.NewService(nil); err == nil {
		t.Error("NewService(nil) succeeded")
	}
	ms, _ := memstore.New()
	svc, err := inventory.NewService(ms)
	if err != nil {
		t.Fatal(err)
	}
	items, err := svc.List(ctx)
	if err != nil || items == nil || len(items) != 0 {
		t.Errorf("List of an empty store = %#v, %v; want an empty non-nil slice", items, err)
	}
	if err := svc.Put(ctx); err != nil {
		t.Errorf("Put of nothing: %v", err)
	}
	a := inventory.Item{PetID: 5, Quantity: 2, Status: inventory.StatusAvailable}
	b := inventory.Item{PetID: 3, Quantity: 9, Status: inventory.StatusSold}
	if err := svc.Put(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	// Nothing is written when any item is invalid or repeated.
	for name, batch := range map[string][]inventory.Item{
		"invalid status": {{PetID: 6, Quantity: 1, Status: inventory.StatusSold}, {PetID: 7, Quantity: 1, Status: "gone"}},
		"negative":       {{PetID: 6, Quantity: 1, Status: inventory.StatusSold}, {PetID: 5, Quantity: -1, Status: inventory.StatusSold}},
		"repeated":       {{PetID: 6, Quantity: 1, Status: inventory.StatusSold}, {PetID: 6, Quantity: 2, Status: inventory.StatusSold}},
	} {
		err := svc.Put(ctx, batch...)
		if !isInvalidField(err) {
			t.Errorf("%s: Put = %v; want invalid_field", name, err)
		}
	}
	items, _ = svc.List(ctx)
	if len(items) != 2 || items[0] != b || items[1] != a {
		t.Errorf("after rejected Puts: %+v", items)
	}
	for _, q := range []int{-1, inventory.MaxQuantity + 1} {
		if _, err := svc.SetQuantity(ctx, 5, q); !isInvalidField(err) {
			t.Errorf("SetQuantity(%d) = %v; want invalid_field", q, err)
		}
	}
	got, err := svc.SetQuantity(ctx, 5, inventory.MaxQuantity)
	if err != nil || got != (inventory.Item{PetID: 5, Quantity: inventory.MaxQuantity, Status: inventory.StatusAvailable}) {
		t.Errorf("SetQuantity = %+v, %v", got, err)
	}
	if _, err := svc.SetQuantity(ctx, 4, 1); !errors.Is(err, inventory.ErrNotFound) {
		t.Errorf("SetQuantity of a missing pet: %v", err)
	}
	if err := svc.Delete(ctx, 5); err != nil {
		t.Error(err)
	}
	if err := svc.Delete(ctx, 5); !errors.Is(err, inventory.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
}

// nilListStore answers List with a nil slice, as the Store doc allows.
func TestServicePutIfEmpty(t *testing.T) {
	ctx := t.Context()
	a := inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}
	b := inventory.Item{PetID: 2, Quantity: 2, Status: inventory.StatusPending}
	mem, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := inventory.NewService(mem)
	if err != nil {
		t.Fatal(err)
	}
	if wrote, err := svc.PutIfEmpty(ctx, a, inventory.Item{PetID: 3, Status: "lost"}); wrote || !isInvalidField(err) {
		t.Errorf("PutIfEmpty with an invalid item = %v, %v; want false, invalid_field", wrote, err)
	}
	if wrote, err := svc.PutIfEmpty(ctx, a); !wrote || err != nil {
		t.Errorf("PutIfEmpty into an empty store = %v, %v; want true", wrote, err)
	}
	if wrote, err := svc.PutIfEmpty(ctx, b); wrote || err != nil {
		t.Errorf("PutIfEmpty into a store holding an entry = %v, %v; want false, nil", wrote, err)
	}
	if items, _ := svc.List(ctx); len(items) != 1 || items[0] != a {
		t.Errorf("after PutIfEmpty twice: %+v; want only the first seed", items)
	}

	// A store that is no Seeder: the Store interface hides memstore's
	// PutIfEmpty.
	mem2, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := inventory.NewService(struct{ inventory.Store }{mem2})
	if err != nil {
		t.Fatal(err)
	}
	wrote, err := plain.PutIfEmpty(ctx, a)
	if wrote || !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "inventory.Seeder") {
		t.Errorf("PutIfEmpty on a store without Seeder = %v, %v; want false and an error matching errors.ErrUnsupported naming Seeder", wrote, err)
	}
	if items, _ := mem2.List(ctx); len(items) != 0 {
		t.Errorf("PutIfEmpty on a store without Seeder wrote %+v", items)
	}
}

type nilListStore struct{ *memstore.Store }

func (nilListStore) List(context.Context) ([]inventory.Item, error) { return nil, nil }

func TestEmptyListIsAnArray(t *testing.T) {
	ms, _ := memstore.New()
	api := newAPI(t, nilListStore{ms})
	if status, _, body := serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList}); status != 200 || body != "[]" {
		t.Errorf("empty list: %d %s; want 200 []", status, body)
	}
}

// isInvalidField reports whether err is an *inventory.Error with code
// invalid_field.
func isInvalidField(err error) bool {
	var e *inventory.Error
	return errors.As(err, &e) && e.Code() == inventory.CodeInvalidField
}
