// Package storetest checks an inventory.Store implementation against the
// contract written on the inventory.Store interface, in the spirit of
// testing/fstest and go-cloud's drivertest: every backend of this
// repository runs it, and a team writing its own backend should too.
//
// Use it from a test of the backend's package:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, storetest.Config{
//			NewStore: func(t *testing.T) inventory.Store {
//				s, err := mystore.New(...) // a fresh, empty store
//				if err != nil {
//					t.Fatal(err)
//				}
//				t.Cleanup(func() { /* remove what s wrote */ })
//				return s
//			},
//		})
//	}
//
// Run calls Config.NewStore once per subtest; each call must return a
// store that holds no entry and shares nothing with the stores returned
// by earlier calls (for a shared server such as Redis: a fresh key
// prefix). As testing/fstest does with the optional interfaces of a file
// system, Run probes the optional interfaces of package inventory: the
// checks of ChangeLister and of Seeder run on a store that implements
// them and are skipped on one that does not, and Run logs which it found.
// The subtests check:
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
//   - for a store that implements the optional inventory.ChangeLister:
//     ListChanges("") returns every entry (Full), a cursor with nothing
//     written since returns no change, the changes after each kind of
//     write (SetQuantity, Put of new and of replaced entries, Delete)
//     applied to the state held lead to what List returns, cursors are
//     never "", and a cursor the store never issued gets every entry and no
//     error;
//   - the same under writes: Config.SnapshotPets pets (3000 by default)
//     while a writer makes a numbered sequence of writes (each writing its
//     number as a quantity, with puts and deletes among them) and two
//     readers list, one always from "", one from its own cursor applying
//     each Log: every state either reaches is one the store held, never
//     older than the one before, and List's once the writer stops;
//   - with Config.TrimLog, Config.LoseLog: cursors held across a log
//     trimmed, or lost (replaced by one that knows none of its positions,
//     the entries kept), and more writes, still lead to List's state;
//   - with Config.BetweenPages (and TrimLog or LoseLog): the log trimmed or
//     lost, alone or followed by a write, between two pages of a read of
//     the changes since a cursor: the read still leads to List's state
//     (it never skips what the fault removed), and so do the reads after;
//   - with Config.NewInstance: a write acknowledged by one instance of the
//     store is in the very next ListChanges of another instance, with that
//     instance's own cursor, in both directions, for every kind of write;
//   - for a store that implements the optional inventory.Seeder:
//     PutIfEmpty writes a seed whole into an empty store (one emptied by
//     Delete too, and a seed of hundreds of pets) and reports it written,
//     writes nothing and reports false into a store holding any entry,
//     fails and writes nothing under a context that is done, and, for a
//     ChangeLister, a cursor held from before leads to the seeded state;
//   - Config.Writers callers seeding an empty store at once: exactly one
//     reports writing, and the store holds exactly its seed.
//
// A check that names a Config field (TrimLog, LoseLog, BetweenPages,
// NewInstance) is skipped, with a log line, when that field is nil; every
// ChangeLister check is skipped, with a log line, for a store that is not
// one, and every Seeder check for a store that is not one. For a backend shared by processes (Redis), a
// test sets them all:
//
//	storetest.Run(t, storetest.Config{
//		NewStore:     newStore,      // a fresh key prefix per call
//		NewInstance:  sameKeys,      // another client over the same keys
//		TrimLog:      trimStream,    // XTRIM the change stream to nothing
//		LoseLog:      replaceStream,
//		BetweenPages: beforePage2,   // small pages, the fault before the second
//	})
//
// A failure says which state was wrong and how: which caller (a cursor
// from before a trimmed log, the reader on instance B), which pets are
// missing, extra, or stale.
//
// The checks themselves are plain functions returning errors, so the
// package's own tests prove each one fails on a store that breaks its
// rule.
package storetest
