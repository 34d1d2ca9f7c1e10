package server

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/petinventory/petinventory/inventory"
)

// gated is what the gate wraps: the store's methods the API calls.
type gated interface {
	inventory.Store
	inventory.ChangeLister
}

// gatedStore is the store the API serves from: until it is opened (the
// store initialized and ready), every method fails with its refusal, an
// unavailable error, so that a client is answered 503 with Retry-After,
// never a list of a store not initialized yet ([]) nor 404 for a pet the
// seed would write. Its refusal names what keeps the store closed when
// that is known and an operator must act (a store not initialized: the
// fault and its fix). It wraps each method of inventory.Store and
// inventory.ChangeLister explicitly, so that a method added to them later
// does not compile until it is gated here too; initializing the store does
// not go through it.
type gatedStore struct {
	store   gated
	refusal atomic.Pointer[error] // nil once open
}

// errNotReady is the cause of the answers before the store is ready.
var errNotReady = errors.New("the inventory store is not initialized or not ready yet (see /readyz)")

var (
	_ inventory.Store        = (*gatedStore)(nil)
	_ inventory.ChangeLister = (*gatedStore)(nil)
)

// newGate returns a closed gate over store.
func newGate(store gated) *gatedStore {
	g := &gatedStore{store: store}
	err := inventory.Unavailable(errNotReady)
	g.refusal.Store(&err)
	return g
}

// open lets every call through, for good.
func (g *gatedStore) open() { g.refusal.Store(nil) }

// refuse makes a closed gate answer with err (an error matching
// inventory.ErrUnavailable) instead; an open gate stays open.
func (g *gatedStore) refuse(err error) {
	for {
		old := g.refusal.Load()
		if old == nil || g.refusal.CompareAndSwap(old, &err) {
			return
		}
	}
}

// closed returns the refusal, or nil when the gate is open.
func (g *gatedStore) closed() error {
	if p := g.refusal.Load(); p != nil {
		return *p
	}
	return nil
}

func (g *gatedStore) List(ctx context.Context) ([]inventory.Item, error) {
	if err := g.closed(); err != nil {
		return nil, err
	}
	return g.store.List(ctx)
}

func (g *gatedStore) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if err := g.closed(); err != nil {
		return inventory.Changes{}, err
	}
	return g.store.ListChanges(ctx, since)
}

func (g *gatedStore) SetQuantity(ctx context.Context, petID int64, quantity int) (inventory.Item, error) {
	if err := g.closed(); err != nil {
		return inventory.Item{}, err
	}
	return g.store.SetQuantity(ctx, petID, quantity)
}

func (g *gatedStore) Put(ctx context.Context, items ...inventory.Item) error {
	if err := g.closed(); err != nil {
		return err
	}
	return g.store.Put(ctx, items...)
}

func (g *gatedStore) Delete(ctx context.Context, petID int64) error {
	if err := g.closed(); err != nil {
		return err
	}
	return g.store.Delete(ctx, petID)
}
