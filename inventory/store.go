package inventory

import "context"

// Store holds the inventory entries. Implementations must be safe for
// concurrent use by many goroutines (and, for shared stores such as Redis,
// by many processes), and must honour ctx: a call whose context is done
// returns promptly with an error.
//
// Callers go through Service (as the API does), which checks what is
// written: a store may trust that quantities are in 0..MaxQuantity and
// that items pass ValidateItems.
//
// Errors: a method returns an error matching ErrNotFound (errors.Is) only
// where its doc says so; an error matching ErrUnavailable when the store
// cannot be reached, timed out, or refuses work for now (the API answers
// 503 with Retry-After); any other error is a bug and is answered with 500.
// A store never reports a failure as success or as not found.
//
// The package storetest checks an implementation against this contract.
type Store interface {
	// List returns every entry, ordered by ascending PetID, as one
	// consistent snapshot: the result is a state the store really held at
	// one instant, never a mix of two writes. An empty store returns an
	// empty (non-nil or nil) slice and no error. Its cost in round trips
	// to a remote store is constant, whatever the number of entries.
	List(ctx context.Context) ([]Item, error)

	// SetQuantity atomically replaces the quantity of the entry for
	// petID, leaves its status unchanged, and returns the entry as stored
	// by this very write. When no entry exists it returns an error
	// matching ErrNotFound and creates nothing. Concurrent calls for the
	// same pet are serialised: none is lost, and each returns its own
	// write.
	SetQuantity(ctx context.Context, petID int64, quantity int) (Item, error)

	// Put creates or replaces the given entries, for seeding and
	// administration. It is idempotent. Put of several items should be
	// atomic where the backend allows it; the doc of each backend says
	// whether it is.
	Put(ctx context.Context, items ...Item) error

	// Delete removes the entry for petID. It returns an error matching
	// ErrNotFound when there is none.
	Delete(ctx context.Context, petID int64) error
}

// VersionedLister is an optional interface of a Store that can tell cheaply
// whether its contents changed since an earlier list. The API uses it to
// answer the list from a cached encoding while nothing changed, which makes
// a list cost what writing pre-encoded bytes costs.
//
// A type that wraps a store by embedding it (to add metrics, say) has the
// embedded ListSince promoted past its own List: it must wrap ListSince
// too, or hide it by embedding the Store interface instead of the type.
type VersionedLister interface {
	// ListSince returns the version of the store's contents, a number that
	// changes with every write (SetQuantity, Put, Delete) and is never 0.
	// When that version differs from since, changed is true and items are
	// the entries as List returns them, taken in the same snapshot as the
	// version; otherwise items is nil and the caller's copy is current.
	ListSince(ctx context.Context, since uint64) (items []Item, version uint64, changed bool, err error)
}

// Seeder is an optional interface of a Store that can seed atomically:
// write entries only into a store that holds none, so that replicas
// starting together seed once and a restart never overwrites real stock.
// Service.PutIfEmpty uses it.
type Seeder interface {
	// PutIfEmpty writes items, as Put does, only when the store holds no
	// entry at all, and reports whether it wrote them; atomically.
	PutIfEmpty(ctx context.Context, items ...Item) (wrote bool, err error)
}
