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
// where its doc says so (the API answers 404); ErrUnavailable,
// Unavailable(cause) or the context's error when the store cannot be
// reached, timed out, or refuses work for now (503 with Retry-After); any
// other error is a failure the API answers 500 and logs. A store never
// reports a failure as success or as not found.
//
// The package storetest checks an implementation against this contract.
type Store interface {
	// List returns every entry, ordered by ascending PetID, as one
	// consistent snapshot: the result is a state the store really held at
	// one instant, never a mix of two writes. An empty store returns an
	// empty (non-nil or nil) slice and no error. A remote store shared
	// with other clients reads a large inventory in bounded chunks, so
	// that no single command of the shared server runs long: its round
	// trips grow with the inventory (a ChangeLister keeps a list of an
	// unchanged inventory at one).
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

// ChangeLister is an optional interface of a Store that can say what
// changed since an earlier read. The API keeps the inventory it last read,
// encoded in segments, and asks the store only for what happened since: a
// list of an unchanged inventory costs one small call, and a change costs
// the re-encoding of the segments it touches, not the whole body. memstore
// and redisstore implement it; a store without it is listed with List and
// encoded whole every time.
//
// A type that wraps a store by embedding it (to add metrics, say) has the
// embedded ListChanges promoted past its own List: it must wrap
// ListChanges too, or hide it by embedding the Store interface instead of
// the type.
type ChangeLister interface {
	// ListChanges returns how the store's contents differ from the state
	// named by since, a Changes.Cursor that an earlier call returned; ""
	// names no state (the caller holds nothing). When the store cannot say
	// (since is "", unknown to it, or older than what it remembers), it
	// returns Full: every entry. The state reached by applying the changes
	// is one the store held at one instant during the call, so every write
	// that completed before the call is in it, as List promises.
	ListChanges(ctx context.Context, since string) (Changes, error)
}

// Changes is the answer of ChangeLister.ListChanges.
type Changes struct {
	// Cursor names the state the caller holds once it has applied these
	// changes; it is never "". It may differ from the since it answers
	// even when nothing changed.
	Cursor string

	// Full reports that Items is every entry, to replace what the caller
	// held; Log is then empty.
	Full bool

	// Items, when Full, is every entry, each pet once, in ascending PetID
	// order: what List returns.
	Items []Item

	// Log, when not Full, is what happened since, oldest first: a later
	// change of a pet replaces an earlier one. Empty when nothing changed.
	Log []Change
}

// Change is one entry of Changes.Log: the entry of a pet as a write left
// it, or its removal. Each sets absolute values, so applying a change twice
// or a later one over it converges on the same state.
type Change struct {
	// Item is the entry after the write. When Deleted, only PetID is set.
	Item
	// Deleted reports that the write removed the entry.
	Deleted bool
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
