package server

import (
	"context"
	"errors"
	"testing"

	"github.com/petinventory/petinventory/inventory"
)

// callCounter is a store that counts the calls that reach it.
type callCounter struct{ calls int }

func (c *callCounter) List(context.Context) ([]inventory.Item, error) { c.calls++; return nil, nil }
func (c *callCounter) ListChanges(context.Context, string) (inventory.Changes, error) {
	c.calls++
	return inventory.Changes{}, nil
}
func (c *callCounter) SetQuantity(context.Context, int64, int) (inventory.Item, error) {
	c.calls++
	return inventory.Item{}, nil
}
func (c *callCounter) Put(context.Context, ...inventory.Item) error { c.calls++; return nil }
func (c *callCounter) Delete(context.Context, int64) error          { c.calls++; return nil }

// every calls each method of the gate, and returns their errors.
func every(g *gatedStore) []error {
	ctx := context.Background()
	_, e1 := g.List(ctx)
	_, e2 := g.ListChanges(ctx, "")
	_, e3 := g.SetQuantity(ctx, 1, 1)
	return []error{e1, e2, e3, g.Put(ctx), g.Delete(ctx, 1)}
}

// The gate refuses every method of the store until open, with its
// refusal (an unavailable error: first that the store is not ready, then
// what refuse names), and lets every one through once open, for good.
func TestGate(t *testing.T) {
	store := &callCounter{}
	g := newGate(store)
	for i, err := range every(g) {
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, errNotReady) {
			t.Errorf("method %d while closed = %v; want unavailable, not ready", i, err)
		}
	}
	fault := inventory.UnavailableBecause("the store is not initialized: run -seed once", errors.New("no marker"))
	g.refuse(fault)
	for i, err := range every(g) {
		if err != fault {
			t.Errorf("method %d after refuse = %v; want the refusal", i, err)
		}
	}
	if store.calls != 0 {
		t.Fatalf("%d calls reached the store through a closed gate", store.calls)
	}
	g.open()
	g.refuse(fault) // an open gate stays open
	for i, err := range every(g) {
		if err != nil {
			t.Errorf("method %d once open = %v", i, err)
		}
	}
	if store.calls != 5 {
		t.Errorf("%d calls reached the store once open, want 5", store.calls)
	}
}
