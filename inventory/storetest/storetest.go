package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
)

// Config says what Run checks: the store's constructor, and sizes, limits
// and hooks of one's choosing.
type Config struct {
	// NewStore returns a fresh store for one subtest: it holds no entry and
	// shares nothing with the stores of other calls. It may call t.Fatal,
	// t.Skip and t.Cleanup (to remove what the store wrote). Required.
	NewStore func(t *testing.T) inventory.Store

	// Writers is how many goroutines update at once in the concurrency
	// subtests. Default 8, sized for a 2-core machine under -race.
	Writers int

	// Updates is how many updates each writer makes, to the hot pet and to
	// its own pet. Default 100.
	Updates int

	// Timeout bounds each subtest, so that a store that hangs fails the
	// test instead of stalling it until go test's own timeout. Default 2
	// minutes.
	Timeout time.Duration

	// NewInstance returns a second store over the same data as s, as another process sees it, for
	// the read-your-writes check across instances; nil skips that check (with a log line).
	NewInstance func(t *testing.T, s inventory.Store) inventory.Store
	// TrimLog drops s's change log up to now, as a capped log outrun by writes does; nil skips.
	TrimLog func(ctx context.Context, s inventory.Store) error
	// LoseLog replaces s's change log by one that holds none of the positions issued so far,
	// keeping the entries (a restart without persistence of the log, a failover that lost its
	// tail); nil skips.
	LoseLog func(ctx context.Context, s inventory.Store) error
	// BetweenPages makes the next ListChanges of s with a cursor run fault once, after the
	// first page of its read of the change log and before the next, and makes s's pages hold
	// at most 4 changes, so that the 12 changes the check writes after a cursor take several.
	// The check (ListChangesBetweenPages) runs TrimLog and LoseLog, each alone and followed by
	// a write, as the fault: a store that reads on after its last page without checking that
	// the log still follows it skips the changes the fault removed. nil (or TrimLog and LoseLog
	// both nil) skips it.
	BetweenPages func(s inventory.Store, fault func())
	// SnapshotPets is how many pets the snapshot-under-writes check holds; default 3000.
	SnapshotPets int

	// instance is NewInstance bound to the running subtest's t, set by
	// Run (the checks themselves take no t).
	instance func(s inventory.Store) inventory.Store
}

func (c Config) withDefaults() Config {
	if c.Writers <= 0 {
		c.Writers = 8
	}
	if c.Updates <= 0 {
		c.Updates = 100
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.SnapshotPets <= 0 {
		c.SnapshotPets = 3000
	}
	return c
}

// Run checks the stores made by c.NewStore against the inventory.Store
// contract, one subtest per rule. As testing/fstest does, it probes the
// optional interfaces of package inventory (ChangeLister, Seeder): the
// checks of each one the store implements run, those of the others are
// skipped, and Run logs which it found.
func Run(t *testing.T, c Config) {
	t.Helper()
	if c.NewStore == nil {
		t.Fatal("storetest: Config.NewStore is nil")
	}
	c = c.withDefaults()
	implemented := map[string]bool{} // by interface, once probed
	for _, g := range groups {
		for _, ck := range g.checks {
			t.Run(ck.name, func(t *testing.T) {
				s := c.NewStore(t)
				if s == nil {
					t.Fatal("storetest: NewStore returned a nil store")
				}
				if g.implementedBy != nil {
					ok := g.implementedBy(s)
					implemented[g.iface] = ok
					if !ok {
						t.Skipf("the store (%T) does not implement %s", s, g.iface)
					}
				}
				ctx, cancel := context.WithTimeout(t.Context(), c.Timeout)
				defer cancel()
				cc := c
				if c.NewInstance != nil {
					cc.instance = func(s inventory.Store) inventory.Store { return c.NewInstance(t, s) }
				}
				if err := ck.fn(ctx, s, cc, t.Logf); err != nil {
					t.Error(err)
				}
			})
		}
	}
	var found []string
	for _, g := range groups {
		if g.implementedBy == nil {
			continue
		}
		switch ok, probed := implemented[g.iface]; {
		case !probed:
			found = append(found, g.iface+": not probed (its checks did not run)")
		case ok:
			found = append(found, g.iface+": implemented, checked")
		default:
			found = append(found, g.iface+": not implemented, skipped")
		}
	}
	t.Logf("storetest: optional interfaces: %s", strings.Join(found, "; "))
}

// logf is where a check reports what it measured (not a failure).
type logf func(format string, args ...any)

// check is one rule of the contract: fn returns an error describing every
// way s broke it (nil when s kept it).
type check struct {
	name string
	fn   func(ctx context.Context, s inventory.Store, c Config, log logf) error
}

// group is the checks of one interface: inventory.Store itself
// (implementedBy nil), or an optional one, whose checks run only on a
// store that implements it.
type group struct {
	iface         string
	implementedBy func(inventory.Store) bool
	checks        []check
}

var groups = []group{
	{"inventory.Store", nil, checks},
	{"inventory.ChangeLister", func(s inventory.Store) bool { _, ok := s.(inventory.ChangeLister); return ok }, changeListerChecks},
	{"inventory.Seeder", func(s inventory.Store) bool { _, ok := s.(inventory.Seeder); return ok }, seederChecks},
}

var checks = []check{
	{"ListEmpty", checkListEmpty},
	{"ListOrder", checkListOrder},
	{"PutReplaceIdempotent", checkPut},
	{"SetQuantity", checkSetQuantity},
	{"SetQuantityNotFound", checkSetQuantityNotFound},
	{"Delete", checkDelete},
	{"ContextDone", checkContextDone},
	{"ConcurrentUpdates", checkConcurrentUpdates},
	{"ConcurrentPutDelete", checkConcurrentPutDelete},
}

var changeListerChecks = []check{
	{"ListChanges", checkListChanges},
	{"ListChangesSnapshot", checkListChangesSnapshot},
	{"ListChangesTrimmedLog", checkListChangesTrimmedLog},
	{"ListChangesLostLog", checkListChangesLostLog},
	{"ListChangesBetweenPages", checkListChangesBetweenPages},
	{"ListChangesTwoInstances", checkListChangesTwoInstances},
}

var seederChecks = []check{
	{"PutIfEmpty", checkPutIfEmpty},
	{"PutIfEmptyConcurrent", checkPutIfEmptyConcurrent},
}
