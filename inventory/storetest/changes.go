package storetest

//lint:file-ignore ST1005 failure messages begin with the name of the Store method they are about (ListChanges, Put).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/petinventory/petinventory/inventory"
)

// changeLister returns s as an inventory.ChangeLister, or logs why the
// check has nothing to do.
func changeLister(s inventory.Store, log logf) (inventory.ChangeLister, bool) {
	cl, ok := s.(inventory.ChangeLister)
	if !ok {
		log("the store does not implement inventory.ChangeLister: nothing to check")
	}
	return cl, ok
}

// holder is a caller of ListChanges, as the API is: it holds a state and
// the cursor that names it, and applies each answer to it.
type holder struct {
	cl     inventory.ChangeLister
	name   string // which caller, in messages: "the reader on instance B"
	cursor string
	state  map[int64]inventory.Item
	logs   int // answers that were a Log (not Full)
	fulls  int
}

func newHolder(cl inventory.ChangeLister, name string) *holder {
	return &holder{cl: cl, name: name, state: map[int64]inventory.Item{}}
}

// read asks for the changes since the held cursor, checks the answer's
// shape and applies it.
func (h *holder) read(ctx context.Context) (inventory.Changes, error) {
	ch, err := h.cl.ListChanges(ctx, h.cursor)
	if err != nil {
		return ch, fmt.Errorf("ListChanges(%.60q) by %s: %w", h.cursor, h.name, err)
	}
	if err := apply(h.state, ch); err != nil {
		return ch, fmt.Errorf("ListChanges(%.60q) by %s: %w", h.cursor, h.name, err)
	}
	if ch.Full {
		h.fulls++
	} else {
		h.logs++
	}
	h.cursor = ch.Cursor
	return ch, nil
}

// items is the held state by ascending PetID.
func (h *holder) items() []inventory.Item {
	return sorted(slices.Collect(maps.Values(h.state)))
}

// apply checks the shape of ch (a cursor; Full with sorted Items and no
// Log, or a Log of well-formed changes and no Items) and applies it to
// state.
func apply(state map[int64]inventory.Item, ch inventory.Changes) error {
	if ch.Cursor == "" {
		return errors.New(`returned the cursor "", which names no state`)
	}
	if ch.Full {
		if len(ch.Log) != 0 {
			return fmt.Errorf("returned Full and a Log of %d changes; want no Log with Full", len(ch.Log))
		}
		for i, it := range ch.Items {
			if i > 0 && ch.Items[i-1].PetID >= it.PetID {
				return fmt.Errorf("returned Full items not in strictly ascending petId order: item %d is pet %d, item %d is pet %d", i-1, ch.Items[i-1].PetID, i, it.PetID)
			}
		}
		clear(state)
		for _, it := range ch.Items {
			state[it.PetID] = it
		}
		return nil
	}
	if len(ch.Items) != 0 {
		return fmt.Errorf("returned %d items without Full; want Items only with Full", len(ch.Items))
	}
	for i, c := range ch.Log {
		if c.Deleted {
			if c.Quantity != 0 || c.Status != "" {
				return fmt.Errorf("returned change %d %+v, a delete with a quantity or status; want only PetID set", i, c)
			}
			delete(state, c.PetID)
			continue
		}
		state[c.PetID] = c.Item
	}
	return nil
}

// diffItems describes how got, the state a caller reached, differs from
// want, the state it should hold (both by ascending PetID): "" when they
// are equal.
func diffItems(got, want []inventory.Item) string {
	var diffs []string
	note := func(format string, args ...any) {
		diffs = append(diffs, fmt.Sprintf(format, args...))
	}
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j == len(want) || i < len(got) && got[i].PetID < want[j].PetID:
			note("pet %d is there (%+v) but has no entry", got[i].PetID, got[i])
			i++
		case i == len(got) || want[j].PetID < got[i].PetID:
			note("pet %d is missing (want %+v)", want[j].PetID, want[j])
			j++
		default:
			g, w := got[i], want[j]
			switch {
			case g.Quantity != w.Quantity && g.Status != w.Status:
				note("pet %d is %+v, want %+v", g.PetID, g, w)
			case g.Quantity < w.Quantity:
				note("pet %d has quantity %d, want %d (stale quantity)", g.PetID, g.Quantity, w.Quantity)
			case g.Quantity > w.Quantity:
				note("pet %d has quantity %d, want %d", g.PetID, g.Quantity, w.Quantity)
			case g.Status != w.Status:
				note("pet %d has status %q, want %q", g.PetID, g.Status, w.Status)
			}
			i++
			j++
		}
	}
	switch {
	case len(diffs) == 0:
		return ""
	case len(diffs) > 3:
		return fmt.Sprintf("%s; and %d more differences (%d pets held, %d want)", strings.Join(diffs[:3], "; "), len(diffs)-3, len(got), len(want))
	}
	return strings.Join(diffs, "; ")
}

// heldEqualsList checks that what h holds is what s lists now.
func heldEqualsList(ctx context.Context, s inventory.Store, h *holder, when string) error {
	list, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("%s: List: %w", when, err)
	}
	if d := diffItems(h.items(), list); d != "" {
		return fmt.Errorf("%s: the state %s reached with ListChanges differs from List: %s", when, h.name, d)
	}
	return nil
}

// readUnchanged checks that h's cursor, with no write since, gets no change.
func readUnchanged(ctx context.Context, h *holder, when string) error {
	ch, err := h.read(ctx)
	if err != nil {
		return fmt.Errorf("%s, nothing written since: %w", when, err)
	}
	if ch.Full || len(ch.Log) != 0 {
		return fmt.Errorf("%s, nothing written since: ListChanges of the current cursor returned Full %v, %d items, %d changes; want no change", when, ch.Full, len(ch.Items), len(ch.Log))
	}
	return nil
}

// garbageCursors are strings no store issues as cursors, each of which
// must be answered with every entry.
var garbageCursors = []string{"x", "0-0/zz", strings.Repeat("9", 4096), "\x00", "-1"}

// checkListChanges checks a store that implements inventory.ChangeLister:
// "" gets every entry, an unchanged cursor no change, the changes of each
// kind of write lead to what List returns, and a cursor the store never
// issued gets every entry without an error.
func checkListChanges(ctx context.Context, s inventory.Store, _ Config, log logf) error {
	cl, ok := changeLister(s, log)
	if !ok {
		return nil
	}
	h := newHolder(cl, "the caller")
	if err := readEmptyStore(ctx, s, h); err != nil {
		return err
	}
	// late holds the state of the empty store until the end, to read every
	// change at once.
	late := newHolder(cl, "a caller that read last before the first write")
	if _, err := late.read(ctx); err != nil {
		return fmt.Errorf("empty store: %w", err)
	}
	if err := followEachWrite(ctx, s, h); err != nil {
		return err
	}
	if _, err := late.read(ctx); err != nil {
		return fmt.Errorf("after every write: %w", err)
	}
	if err := heldEqualsList(ctx, s, late, "after every write"); err != nil {
		return err
	}
	if err := checkGarbageCursors(ctx, s, cl); err != nil {
		return err
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cl.ListChanges(cancelled, h.cursor); err == nil ||
		!errors.Is(err, context.Canceled) && !errors.Is(err, inventory.ErrUnavailable) {
		return fmt.Errorf("ListChanges with a context cancelled returned %v, want an error matching context.Canceled or inventory.ErrUnavailable", err)
	}
	return nil
}

// readEmptyStore checks h's first read of an empty store: "" gets Full
// (and no entry, as List), and the cursor it returns gets no change.
func readEmptyStore(ctx context.Context, s inventory.Store, h *holder) error {
	ch, err := h.read(ctx)
	if err != nil {
		return fmt.Errorf("empty store: %w", err)
	}
	if !ch.Full {
		return fmt.Errorf(`empty store: ListChanges("") returned a Log of %d changes, want Full: "" names no state`, len(ch.Log))
	}
	if err := heldEqualsList(ctx, s, h, "empty store"); err != nil {
		return err
	}
	return readUnchanged(ctx, h, "empty store")
}

// followEachWrite makes one write of each kind, and after each checks that
// h's read of the changes leads to what List returns, and that the cursor
// it got then gets no change.
func followEachWrite(ctx context.Context, s inventory.Store, h *holder) error {
	a := inventory.Item{PetID: 4, Quantity: 1, Status: inventory.StatusPending}
	b := inventory.Item{PetID: -4, Quantity: 2, Status: inventory.StatusSold}
	c := inventory.Item{PetID: 40, Quantity: 3, Status: inventory.StatusAvailable}
	steps := []struct {
		name  string
		write func() error
	}{
		{"Put of two new pets", func() error { return s.Put(ctx, a, b) }},
		{"Put replacing an entry", func() error {
			return s.Put(ctx, inventory.Item{PetID: a.PetID, Quantity: 5, Status: inventory.StatusAvailable})
		}},
		{"SetQuantity", func() error { _, err := s.SetQuantity(ctx, b.PetID, 9); return err }},
		{"Put of a new pet and a replaced one", func() error {
			return s.Put(ctx, c, inventory.Item{PetID: b.PetID, Quantity: 0, Status: inventory.StatusPending})
		}},
		{"Delete", func() error { return s.Delete(ctx, a.PetID) }},
		{"Put of the same item again", func() error { return s.Put(ctx, c) }},
		{"SetQuantity to the same quantity", func() error { _, err := s.SetQuantity(ctx, c.PetID, c.Quantity); return err }},
		{"Put of a deleted pet", func() error { return s.Put(ctx, a) }},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		when := "after " + st.name
		if _, err := h.read(ctx); err != nil {
			return fmt.Errorf("%s: %w", when, err)
		}
		if err := heldEqualsList(ctx, s, h, when); err != nil {
			return err
		}
		if err := readUnchanged(ctx, h, when); err != nil {
			return err
		}
	}
	return nil
}

// checkGarbageCursors: each of garbageCursors gets every entry (Full, as
// List has them), not an error.
func checkGarbageCursors(ctx context.Context, s inventory.Store, cl inventory.ChangeLister) error {
	for _, g := range garbageCursors {
		gh := newHolder(cl, fmt.Sprintf("a caller holding %.20q (%d bytes, never issued)", g, len(g)))
		ch, err := cl.ListChanges(ctx, g)
		if err != nil {
			return fmt.Errorf("ListChanges(%.20q) (%d bytes, never issued): %w; want every entry (Full), not an error", g, len(g), err)
		}
		if err := apply(gh.state, ch); err != nil {
			return fmt.Errorf("ListChanges(%.20q) (%d bytes, never issued) %w", g, len(g), err)
		}
		if !ch.Full {
			return fmt.Errorf("ListChanges(%.20q) (%d bytes, never issued) returned a Log of %d changes, want Full", g, len(g), len(ch.Log))
		}
		if err := heldEqualsList(ctx, s, gh, "after every write"); err != nil {
			return err
		}
	}
	return nil
}

// checkListChangesTrimmedLog holds cursors from before and after some
// writes, has the store's log trimmed (Config.TrimLog), writes again, and
// checks that every cursor still leads to List's state.
func checkListChangesTrimmedLog(ctx context.Context, s inventory.Store, c Config, log logf) error {
	if c.TrimLog == nil {
		log("Config.TrimLog is nil: the trimmed-log fallback is not checked")
		return nil
	}
	return checkLogFallback(ctx, s, log, "trimming the log", c.TrimLog)
}

// checkListChangesLostLog is checkListChangesTrimmedLog with the log lost
// (Config.LoseLog): replaced by one whose positions say nothing of the
// ones issued before.
func checkListChangesLostLog(ctx context.Context, s inventory.Store, c Config, log logf) error {
	if c.LoseLog == nil {
		log("Config.LoseLog is nil: the lost-log fallback is not checked")
		return nil
	}
	return checkLogFallback(ctx, s, log, "losing the log", c.LoseLog)
}

// checkLogFallback: cursors from before the first write, after some
// writes, and after the fault, then more writes than were made before the
// fault (so that a new log's positions reach the old cursors' ones), then
// each cursor must lead to List's state.
func checkLogFallback(ctx context.Context, s inventory.Store, log logf, fault string, do func(context.Context, inventory.Store) error) error {
	cl, ok := changeLister(s, log)
	if !ok {
		return nil
	}
	pets := []inventory.Item{
		{PetID: 1, Quantity: 10, Status: inventory.StatusAvailable},
		{PetID: 2, Quantity: 20, Status: inventory.StatusPending},
		{PetID: 3, Quantity: 30, Status: inventory.StatusSold},
	}
	if err := s.Put(ctx, pets...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	early := newHolder(cl, "a caller that read before the writes before "+fault)
	if _, err := early.read(ctx); err != nil {
		return err
	}
	// Writes before the fault, of pets that the writes after it leave alone.
	if _, err := s.SetQuantity(ctx, 1, 11); err != nil {
		return fmt.Errorf("SetQuantity: %w", err)
	}
	if err := s.Put(ctx, inventory.Item{PetID: 4, Quantity: 40, Status: inventory.StatusPending}); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if err := s.Delete(ctx, 2); err != nil {
		return fmt.Errorf("Delete: %w", err)
	}
	before := newHolder(cl, "a caller that read just before "+fault)
	if _, err := before.read(ctx); err != nil {
		return err
	}
	if err := do(ctx, s); err != nil {
		return fmt.Errorf("%s: %w", fault, err)
	}
	after := newHolder(cl, "a caller that read just after "+fault)
	if _, err := after.read(ctx); err != nil {
		return err
	}
	// More writes than the log held before the fault.
	for q := range 12 {
		if _, err := s.SetQuantity(ctx, 3, 31+q); err != nil {
			return fmt.Errorf("SetQuantity: %w", err)
		}
	}
	if err := s.Put(ctx, inventory.Item{PetID: 5, Quantity: 50, Status: inventory.StatusSold}); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if err := s.Delete(ctx, 4); err != nil {
		return fmt.Errorf("Delete: %w", err)
	}
	for _, h := range []*holder{early, before, after, newHolder(cl, "a new caller")} {
		if _, err := h.read(ctx); err != nil {
			return fmt.Errorf("after %s and more writes: %w", fault, err)
		}
		if err := heldEqualsList(ctx, s, h, "after "+fault+" and more writes"); err != nil {
			return err
		}
		if err := readUnchanged(ctx, h, "after "+fault+" and more writes, "+h.name); err != nil {
			return err
		}
	}
	log("after %s: %d of the 3 callers holding a cursor were answered with every entry", fault, early.fulls+before.fulls+after.fulls-3)
	return nil
}

// checkListChangesTwoInstances writes on one instance of the store
// (Config.NewInstance) and reads its changes on the other, in both
// directions: a write acknowledged by one is in the next ListChanges of the
// other, with that other's own cursor.
func checkListChangesTwoInstances(ctx context.Context, s inventory.Store, c Config, log logf) error {
	if c.instance == nil {
		log("Config.NewInstance is nil: read-your-writes across instances is not checked")
		return nil
	}
	other := c.instance(s)
	if other == nil {
		return errors.New("Config.NewInstance returned a nil store")
	}
	inst := [2]inventory.Store{s, other}
	names := [2]string{"A", "B"}
	var hs [2]*holder
	for i, st := range inst {
		cl, ok := st.(inventory.ChangeLister)
		if !ok {
			if i == 0 {
				log("the store does not implement inventory.ChangeLister: nothing to check")
				return nil
			}
			return errors.New("the store is an inventory.ChangeLister but the second instance NewInstance returned is not")
		}
		hs[i] = newHolder(cl, "the reader on instance "+names[i])
		if _, err := hs[i].read(ctx); err != nil {
			return err
		}
	}
	want := map[int64]inventory.Item{}
	type write struct {
		name string
		do   func(st inventory.Store) error
	}
	writes := func(base int64) []write {
		x := inventory.Item{PetID: base, Quantity: 1, Status: inventory.StatusAvailable}
		y := inventory.Item{PetID: base + 1, Quantity: 2, Status: inventory.StatusSold}
		x2 := inventory.Item{PetID: base, Quantity: 3, Status: inventory.StatusPending}
		return []write{
			{fmt.Sprintf("Put of new pets %d and %d", x.PetID, y.PetID), func(st inventory.Store) error {
				want[x.PetID], want[y.PetID] = x, y
				return st.Put(ctx, x, y)
			}},
			{fmt.Sprintf("SetQuantity(%d, 7)", y.PetID), func(st inventory.Store) error {
				y.Quantity = 7
				want[y.PetID] = y
				_, err := st.SetQuantity(ctx, y.PetID, 7)
				return err
			}},
			{fmt.Sprintf("Put replacing pet %d", x.PetID), func(st inventory.Store) error {
				want[x.PetID] = x2
				return st.Put(ctx, x2)
			}},
			{fmt.Sprintf("Delete(%d)", y.PetID), func(st inventory.Store) error {
				delete(want, y.PetID)
				return st.Delete(ctx, y.PetID)
			}},
		}
	}
	for w, base := range []int64{100, -100} {
		r := 1 - w
		for _, wr := range writes(base) {
			if err := wr.do(inst[w]); err != nil {
				return fmt.Errorf("%s on instance %s: %w", wr.name, names[w], err)
			}
			wantItems := sorted(slices.Collect(maps.Values(want)))
			for _, i := range []int{r, w} {
				if _, err := hs[i].read(ctx); err != nil {
					return fmt.Errorf("after %s on instance %s: %w", wr.name, names[w], err)
				}
				if d := diffItems(hs[i].items(), wantItems); d != "" {
					return fmt.Errorf("right after %s on instance %s, the state %s reached with ListChanges is not the store's: %s", wr.name, names[w], hs[i].name, d)
				}
			}
			if err := readUnchanged(ctx, hs[r], fmt.Sprintf("after %s on instance %s, %s", wr.name, names[w], hs[r].name)); err != nil {
				return err
			}
		}
	}
	return nil
}
