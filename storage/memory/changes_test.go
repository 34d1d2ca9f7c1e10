package memstore_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// held is the state a caller of ListChanges holds, by PetID.
type held map[int64]inventory.Item

// apply applies ch to h (replacing it when Full) and checks the shape of
// ch: a cursor, Items sorted and alone when Full, a Log alone otherwise.
func (h held) apply(t *testing.T, ch inventory.Changes) {
	t.Helper()
	if ch.Cursor == "" {
		t.Fatalf("ListChanges returned the cursor \"\"")
	}
	if ch.Full {
		if len(ch.Log) != 0 {
			t.Fatalf("ListChanges returned Full with a Log of %d changes", len(ch.Log))
		}
		clear(h)
		for i, it := range ch.Items {
			if i > 0 && ch.Items[i-1].PetID >= it.PetID {
				t.Fatalf("Full items not in ascending PetID order at %d: %d then %d", i, ch.Items[i-1].PetID, it.PetID)
			}
			h[it.PetID] = it
		}
		return
	}
	if len(ch.Items) != 0 {
		t.Fatalf("ListChanges returned %d items without Full", len(ch.Items))
	}
	for _, c := range ch.Log {
		if c.Deleted {
			delete(h, c.PetID)
		} else {
			h[c.PetID] = c.Item
		}
	}
}

// equalsList checks that h is what s lists.
func (h held) equalsList(t *testing.T, s *memstore.Store, when string) {
	t.Helper()
	list, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := slices.SortedFunc(maps.Values(h), func(a, b inventory.Item) int { return cmpID(a.PetID, b.PetID) })
	if !slices.Equal(got, list) {
		t.Fatalf("%s: the state held by applying ListChanges is %+v, List is %+v", when, got, list)
	}
}

func cmpID(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func listChanges(t *testing.T, s *memstore.Store, since string) inventory.Changes {
	t.Helper()
	ch, err := s.ListChanges(t.Context(), since)
	if err != nil {
		t.Fatalf("ListChanges(%q): %v", since, err)
	}
	return ch
}

func TestListChangesLogUntilTheRingOverflows(t *testing.T) {
	s := mustNew(t, inventory.Item{PetID: 1, Quantity: 0, Status: inventory.StatusPending})
	ctx := t.Context()
	h := held{}
	h.apply(t, listChanges(t, s, ""))
	cursor := listChanges(t, s, "").Cursor

	// Exactly as many changes as the log holds: still answered by a Log.
	for q := 1; q <= memstore.LogSize; q++ {
		if _, err := s.SetQuantity(ctx, 1, q); err != nil {
			t.Fatal(err)
		}
	}
	ch := listChanges(t, s, cursor)
	if ch.Full || len(ch.Log) != memstore.LogSize {
		t.Fatalf("after %d writes, ListChanges of the cursor before them = Full %v, %d changes; want the %d changes", memstore.LogSize, ch.Full, len(ch.Log), memstore.LogSize)
	}
	for i, c := range ch.Log {
		if want := (inventory.Change{Item: inventory.Item{PetID: 1, Quantity: i + 1, Status: inventory.StatusPending}}); c != want {
			t.Fatalf("change %d is %+v, want %+v (oldest first)", i, c, want)
		}
	}
	h2 := maps.Clone(h)
	h2.apply(t, ch)
	h2.equalsList(t, s, "after as many writes as the log holds")

	// One more: the first change since the cursor falls off, so the cursor
	// can only be answered with every entry.
	if _, err := s.SetQuantity(ctx, 1, 7); err != nil {
		t.Fatal(err)
	}
	ch = listChanges(t, s, cursor)
	if !ch.Full {
		t.Fatalf("after %d writes, ListChanges of the cursor before them returned %d changes, not Full: the log holds only %d", memstore.LogSize+1, len(ch.Log), memstore.LogSize)
	}
	h.apply(t, ch)
	h.equalsList(t, s, "after the log overflowed")
}

func TestListChangesLargePutResetsTheLog(t *testing.T) {
	s := mustNew(t)
	ctx := t.Context()
	before := listChanges(t, s, "").Cursor
	small := make([]inventory.Item, memstore.LogSize/4)
	for i := range small {
		small[i] = inventory.Item{PetID: int64(i), Quantity: i, Status: inventory.StatusAvailable}
	}
	if err := s.Put(ctx, small...); err != nil {
		t.Fatal(err)
	}
	ch := listChanges(t, s, before)
	if ch.Full || len(ch.Log) != len(small) {
		t.Fatalf("after a Put of %d items, ListChanges = Full %v, %d changes; want a Log of each", len(small), ch.Full, len(ch.Log))
	}
	mid := ch.Cursor
	large := append(small, inventory.Item{PetID: -1, Quantity: 1, Status: inventory.StatusSold})
	if err := s.Put(ctx, large...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{before, mid} {
		ch := listChanges(t, s, c)
		if !ch.Full {
			t.Fatalf("after a Put of %d items, ListChanges(%q) returned a Log of %d, want Full (the Put resets the log)", len(large), c, len(ch.Log))
		}
		h := held{}
		h.apply(t, ch)
		h.equalsList(t, s, "after a large Put")
	}
	// The log starts again after the reset.
	after := listChanges(t, s, mid).Cursor
	if err := s.Delete(ctx, -1); err != nil {
		t.Fatal(err)
	}
	ch = listChanges(t, s, after)
	if want := []inventory.Change{{Item: inventory.Item{PetID: -1}, Deleted: true}}; ch.Full || !slices.Equal(ch.Log, want) {
		t.Fatalf("after a Delete following the reset, ListChanges = Full %v, Log %+v; want Log %+v", ch.Full, ch.Log, want)
	}
}

func TestListChangesForeignAndGarbageCursors(t *testing.T) {
	items := []inventory.Item{{PetID: 1, Quantity: 1, Status: inventory.StatusSold}, {PetID: 2, Quantity: 2, Status: inventory.StatusPending}}
	s := mustNew(t, items...)
	other := mustNew(t, items...)
	ctx := t.Context()
	// Same history on both: equal version numbers, different instances.
	for _, st := range []*memstore.Store{s, other} {
		if _, err := st.SetQuantity(ctx, 1, 5); err != nil {
			t.Fatal(err)
		}
	}
	foreign := listChanges(t, other, "").Cursor
	if _, err := other.SetQuantity(ctx, 2, 9); err != nil {
		t.Fatal(err)
	}
	mine := listChanges(t, s, "").Cursor
	if mine == foreign {
		t.Fatalf("two instances issued the same cursor %q", mine)
	}
	if _, err := s.SetQuantity(ctx, 1, 6); err != nil {
		t.Fatal(err)
	}
	tag, version, ok := strings.Cut(mine, ".")
	if !ok {
		t.Fatalf("cursor %q is not tag.version", mine)
	}
	v, err := strconv.ParseUint(version, 10, 64)
	if err != nil {
		t.Fatalf("cursor %q: %v", mine, err)
	}
	for _, c := range []string{
		foreign,
		"", "x", "0-0/zz", ".", tag, tag + ".", version, "." + version,
		tag + ".0" + version, tag + ".+" + version, tag + ".-1", tag + "." + version + "x",
		tag + "." + strconv.FormatUint(v+100, 10), // a version not issued yet
		tag + ".18446744073709551616",             // past uint64
		tag + "." + strings.Repeat("9", 100),
		strings.Repeat("x", 1<<16),
	} {
		ch, err := s.ListChanges(ctx, c)
		if err != nil {
			t.Fatalf("ListChanges(%.40q): %v", c, err)
		}
		if !ch.Full {
			t.Fatalf("ListChanges(%.40q) returned a Log of %d changes, want Full: the cursor is not one this store issued", c, len(ch.Log))
		}
		h := held{}
		h.apply(t, ch)
		h.equalsList(t, s, fmt.Sprintf("ListChanges(%.40q)", c))
	}
	// The real cursor still gets a Log.
	if ch := listChanges(t, s, mine); ch.Full || len(ch.Log) != 1 {
		t.Fatalf("ListChanges of a cursor one write old = Full %v, %d changes; want one change", ch.Full, len(ch.Log))
	}
}

// TestListChangesIncrementalEqualsList makes random writes (quantities,
// new and replaced entries, Puts of several and of many, deletes) while
// callers holding cursors of various ages list: whatever the answer, Log
// or Full, the state it leads to is what List returns.
func TestListChangesIncrementalEqualsList(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 15))
			s := mustNew(t)
			ctx := t.Context()
			const ids = 200
			item := func() inventory.Item {
				return inventory.Item{
					PetID:    int64(rng.IntN(ids)) - ids/2,
					Quantity: rng.IntN(1000),
					Status:   []inventory.Status{inventory.StatusAvailable, inventory.StatusPending, inventory.StatusSold}[rng.IntN(3)],
				}
			}
			type caller struct {
				h      held
				cursor string
			}
			callers := make([]caller, 4)
			for i := range callers {
				callers[i].h = held{}
			}
			var logs, fulls, staleFulls int
			for step := range 8000 {
				list, err := s.List(ctx)
				if err != nil {
					t.Fatal(err)
				}
				switch r := rng.IntN(100); {
				case r < 55 && len(list) > 0:
					it := list[rng.IntN(len(list))]
					if _, err := s.SetQuantity(ctx, it.PetID, rng.IntN(1000)); err != nil {
						t.Fatal(err)
					}
				case r < 75:
					if err := s.Put(ctx, item()); err != nil {
						t.Fatal(err)
					}
				case r < 80:
					batch := map[int64]inventory.Item{}
					for range rng.IntN(10) {
						it := item()
						batch[it.PetID] = it
					}
					if err := s.Put(ctx, slices.Collect(maps.Values(batch))...); err != nil {
						t.Fatal(err)
					}
				case r == 80 && rng.IntN(20) == 0: // rarely, a Put that resets the log
					var many []inventory.Item
					for id := range memstore.LogSize/4 + 1 {
						many = append(many, inventory.Item{PetID: int64(id) + ids, Quantity: step % 1000, Status: inventory.StatusSold})
					}
					if err := s.Put(ctx, many...); err != nil {
						t.Fatal(err)
					}
				case len(list) > 0:
					if err := s.Delete(ctx, list[rng.IntN(len(list))].PetID); err != nil {
						t.Fatal(err)
					}
				}
				// Caller i lists about once every 8^i writes, the last one
				// about once every 3000: it falls behind the log now and then.
				for i := range callers {
					c := &callers[i]
					if every := []int{1, 8, 64, 3000}[i]; rng.IntN(every) != 0 {
						continue
					}
					ch := listChanges(t, s, c.cursor)
					if ch.Full {
						fulls++
						if c.cursor != "" {
							staleFulls++
						}
					} else {
						logs++
					}
					c.h.apply(t, ch)
					c.cursor = ch.Cursor
					c.h.equalsList(t, s, fmt.Sprintf("seed %d, step %d, caller %d (Full %v)", seed, step, i, ch.Full))
				}
			}
			if logs == 0 || staleFulls == 0 {
				t.Fatalf("%d answers were Logs and %d Full for a cursor the log no longer covers: the test did not exercise both", logs, staleFulls)
			}
			t.Logf("%d Log answers, %d Full (%d for a cursor the log no longer covers)", logs, fulls, staleFulls)
		})
	}
}

func TestListChangesUnchangedAllocatesNothing(t *testing.T) {
	items := make([]inventory.Item, 1000)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i), Quantity: i, Status: inventory.StatusAvailable}
	}
	s := mustNew(t, items...)
	ctx := context.Background()
	cursor := listChanges(t, s, "").Cursor
	var ch inventory.Changes
	var err error
	allocs := testing.AllocsPerRun(1000, func() {
		ch, err = s.ListChanges(ctx, cursor)
	})
	if err != nil || ch.Full || len(ch.Log) != 0 || ch.Cursor != cursor {
		t.Fatalf("ListChanges of the current cursor = %+v, %v; want no change and the same cursor", ch, err)
	}
	if allocs != 0 {
		t.Fatalf("ListChanges of the current cursor allocates %v times per call, want 0", allocs)
	}
}

func TestListChangesContextDone(t *testing.T) {
	s := mustNew(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.ListChanges(ctx, ""); err != context.Canceled {
		t.Fatalf("ListChanges with a context cancelled returned %v, want context.Canceled", err)
	}
}

func mustNew(t *testing.T, items ...inventory.Item) *memstore.Store {
	t.Helper()
	s, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
