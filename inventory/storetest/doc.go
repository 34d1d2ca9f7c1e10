// Package storetest checks an inventory.Store implementation against the
// contract written on the inventory.Store interface, in the spirit of
// testing/fstest and go-cloud's drivertest: every backend of this
// repository runs it, and a team writing its own backend should too.
//
// Use it from a test of the backend's package:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) inventory.Store {
//			s, err := mystore.New(...) // a fresh, empty store
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { /* remove what s wrote */ })
//			return s
//		})
//	}
//
// Run calls the constructor once per subtest; each call must return a
// store that holds no entry and shares nothing with the stores returned
// by earlier calls (for a shared server such as Redis: a fresh key
// prefix). The subtests check:
//
//   - List of an empty store, and ascending petId order (numeric, not
//     lexical), including negative ids and the int64 extremes;
//   - Put creating, replacing (never duplicating) and being idempotent;
//   - SetQuantity returning the stored entry with its status unchanged,
//     and, for a pet with no entry, an error matching ErrNotFound that
//     creates nothing;
//   - Delete, and its ErrNotFound;
//   - a context already cancelled or past its deadline: every method
//     fails (never success, never not-found) and writes nothing;
//   - concurrency, meant to run under -race: many goroutines updating one
//     hot pet and each its own pet while another lists. Every update
//     succeeds and returns its own write, every listing is sorted and
//     shows no torn entry (each pet keeps its own status through every
//     update), no update to a distinct pet is lost, and the final value of
//     the hot pet is the last write of one of the writers;
//   - the same while entries of other pets are put and deleted, where an
//     update may fail with ErrUnavailable (a backend may give up on a
//     contended optimistic transaction) but never return a wrong item;
//   - for a store that implements the optional inventory.VersionedLister:
//     a version that is never 0 and changes with every write, no items for
//     an unchanged version, and List's items for a changed one.
//
// The checks themselves are plain functions returning errors, so the
// package's own tests prove each one fails on a store that breaks its
// rule.
package storetest
