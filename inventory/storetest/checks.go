package storetest

//lint:file-ignore ST1005 failure messages begin with the name of the Store method they are about (List, Put, Delete).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/petinventory/petinventory/inventory"
)

var statuses = [...]inventory.Status{inventory.StatusAvailable, inventory.StatusPending, inventory.StatusSold}

// sorted returns a copy of items ordered by PetID.
func sorted(items []inventory.Item) []inventory.Item {
	out := slices.Clone(items)
	slices.SortFunc(out, func(a, b inventory.Item) int {
		switch {
		case a.PetID < b.PetID:
			return -1
		case a.PetID > b.PetID:
			return 1
		}
		return 0
	})
	return out
}

// listEquals lists s and compares the result with want (in that order).
func listEquals(ctx context.Context, s inventory.Store, want []inventory.Item, when string) error {
	got, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("%s: List: %w", when, err)
	}
	return sameItems(got, want, when)
}

// sameItems describes the first difference between got and want.
func sameItems(got, want []inventory.Item, when string) error {
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			return fmt.Errorf("%s: List returned %d items, want %d; first missing: %+v", when, len(got), len(want), want[i])
		case i >= len(want):
			return fmt.Errorf("%s: List returned %d items, want %d; first extra: %+v", when, len(got), len(want), got[i])
		case got[i] != want[i]:
			return fmt.Errorf("%s: List item %d is %+v, want %+v", when, i, got[i], want[i])
		}
	}
	return nil
}

func checkListEmpty(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	got, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("List of an empty store: %w", err)
	}
	if len(got) != 0 {
		return fmt.Errorf("List of an empty store returned %d items, want none: %+v", len(got), got)
	}
	return nil
}

// checkListOrder puts ids whose lexical and numeric orders differ, the
// int64 extremes, and a few hundred random ids, in several calls and out
// of order; List must return them by ascending numeric petId.
func checkListOrder(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	ids := []int64{math.MaxInt64, -1, 10, 9, 0, math.MinInt64, -10, -9, 100, 1, math.MinInt64 + 1, math.MaxInt64 - 1, -100, 2}
	var all []inventory.Item
	for i, id := range ids {
		q := i * 1000
		if i == 3 {
			q = inventory.MaxQuantity
		}
		all = append(all, inventory.Item{PetID: id, Quantity: q, Status: statuses[i%3]})
	}
	if err := s.Put(ctx, all[:5]...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if err := s.Put(ctx, all[5:]...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if err := listEquals(ctx, s, sorted(all), "after putting ids of both signs and the int64 extremes"); err != nil {
		return err
	}

	// A few hundred more, random over the whole int64 range, in one call.
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[int64]bool{}
	for _, it := range all {
		seen[it.PetID] = true
	}
	var more []inventory.Item
	for len(more) < 300 {
		id := int64(rng.Uint64())
		if seen[id] {
			continue
		}
		seen[id] = true
		more = append(more, inventory.Item{PetID: id, Quantity: rng.IntN(inventory.MaxQuantity + 1), Status: statuses[rng.IntN(3)]})
	}
	if err := s.Put(ctx, more...); err != nil {
		return fmt.Errorf("Put of %d items: %w", len(more), err)
	}
	return listEquals(ctx, s, sorted(append(all, more...)), "after putting 300 random ids")
}

func checkPut(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	if err := s.Put(ctx); err != nil {
		return fmt.Errorf("Put of no item: %w (want a no-op)", err)
	}
	if err := listEquals(ctx, s, nil, "after Put of no item"); err != nil {
		return err
	}
	a := inventory.Item{PetID: 3, Quantity: 30, Status: inventory.StatusPending}
	b := inventory.Item{PetID: -4, Quantity: 0, Status: inventory.StatusSold}
	for i := range 2 {
		if err := s.Put(ctx, a, b); err != nil {
			return fmt.Errorf("Put #%d of the same items: %w", i+1, err)
		}
		if err := listEquals(ctx, s, []inventory.Item{b, a}, fmt.Sprintf("after Put #%d of the same items (Put must be idempotent)", i+1)); err != nil {
			return err
		}
	}
	a2 := inventory.Item{PetID: 3, Quantity: 31, Status: inventory.StatusAvailable}
	if err := s.Put(ctx, a2); err != nil {
		return fmt.Errorf("Put replacing an entry: %w", err)
	}
	return listEquals(ctx, s, []inventory.Item{b, a2}, "after Put replaced an entry (quantity and status must both be replaced, never duplicated)")
}

func checkSetQuantity(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	items := []inventory.Item{
		{PetID: math.MinInt64, Quantity: 1, Status: inventory.StatusAvailable},
		{PetID: -5, Quantity: 2, Status: inventory.StatusSold},
		{PetID: 5, Quantity: 3, Status: inventory.StatusPending},
		{PetID: 50, Quantity: 4, Status: inventory.StatusAvailable},
		{PetID: math.MaxInt64, Quantity: 5, Status: inventory.StatusSold},
	}
	if err := s.Put(ctx, items...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	want := slices.Clone(items)
	steps := []struct {
		idx, qty int
	}{
		{2, 7}, // pet 5: its status must stay pending
		{2, 0},
		{2, 0}, // the same value again
		{4, inventory.MaxQuantity},
		{0, 9},
		{1, 11},
	}
	for _, st := range steps {
		id := want[st.idx].PetID
		got, err := s.SetQuantity(ctx, id, st.qty)
		if err != nil {
			return fmt.Errorf("SetQuantity(%d, %d): %w", id, st.qty, err)
		}
		want[st.idx].Quantity = st.qty
		if got != want[st.idx] {
			return fmt.Errorf("SetQuantity(%d, %d) returned %+v, want %+v (the stored entry, status unchanged)", id, st.qty, got, want[st.idx])
		}
		if err := listEquals(ctx, s, want, fmt.Sprintf("after SetQuantity(%d, %d)", id, st.qty)); err != nil {
			return err
		}
	}
	return nil
}

func checkSetQuantityNotFound(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	notFound := func(id int64, when string) error {
		_, err := s.SetQuantity(ctx, id, 1)
		if !errors.Is(err, inventory.ErrNotFound) {
			return fmt.Errorf("%s: SetQuantity(%d, 1) returned error %v, want one matching inventory.ErrNotFound", when, id, err)
		}
		return nil
	}
	if err := notFound(42, "empty store"); err != nil {
		return err
	}
	if err := listEquals(ctx, s, nil, "after SetQuantity of a pet with no entry in an empty store (it must create nothing)"); err != nil {
		return err
	}
	entry := inventory.Item{PetID: 42, Quantity: 4, Status: inventory.StatusPending}
	if err := s.Put(ctx, entry); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	// Neighbours of an existing id, to catch prefix or sign confusions.
	for _, id := range []int64{-42, 4, 420, 43, 0, math.MinInt64, math.MaxInt64} {
		if err := notFound(id, "store holding pet 42"); err != nil {
			return err
		}
	}
	return listEquals(ctx, s, []inventory.Item{entry}, "after SetQuantity of pets with no entry (it must create nothing)")
}

func checkDelete(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	if err := s.Delete(ctx, 1); !errors.Is(err, inventory.ErrNotFound) {
		return fmt.Errorf("Delete(1) on an empty store returned %v, want an error matching inventory.ErrNotFound", err)
	}
	a := inventory.Item{PetID: -1, Quantity: 1, Status: inventory.StatusAvailable}
	b := inventory.Item{PetID: 2, Quantity: 2, Status: inventory.StatusSold}
	c := inventory.Item{PetID: 3, Quantity: 3, Status: inventory.StatusPending}
	if err := s.Put(ctx, a, b, c); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	if _, err := s.SetQuantity(ctx, b.PetID, 20); err != nil {
		return fmt.Errorf("SetQuantity(2, 20): %w", err)
	}
	if err := s.Delete(ctx, b.PetID); err != nil {
		return fmt.Errorf("Delete(2): %w", err)
	}
	if err := listEquals(ctx, s, []inventory.Item{a, c}, "after Delete(2)"); err != nil {
		return err
	}
	if err := s.Delete(ctx, b.PetID); !errors.Is(err, inventory.ErrNotFound) {
		return fmt.Errorf("second Delete(2) returned %v, want an error matching inventory.ErrNotFound", err)
	}
	if err := s.Delete(ctx, 99); !errors.Is(err, inventory.ErrNotFound) {
		return fmt.Errorf("Delete(99) of a pet that never had an entry returned %v, want an error matching inventory.ErrNotFound", err)
	}
	if _, err := s.SetQuantity(ctx, b.PetID, 5); !errors.Is(err, inventory.ErrNotFound) {
		return fmt.Errorf("SetQuantity(2, 5) after Delete(2) returned %v, want an error matching inventory.ErrNotFound", err)
	}
	if err := listEquals(ctx, s, []inventory.Item{a, c}, "after SetQuantity of a deleted pet (it must create nothing)"); err != nil {
		return err
	}
	// Put again: the entry is Put's, with nothing left of the deleted one.
	b2 := inventory.Item{PetID: 2, Quantity: 7, Status: inventory.StatusPending}
	if err := s.Put(ctx, b2); err != nil {
		return fmt.Errorf("Put after Delete: %w", err)
	}
	return listEquals(ctx, s, []inventory.Item{a, b2, c}, "after Put of a deleted pet")
}

// checkContextDone calls every method with a context already cancelled,
// then one past its deadline: each must fail with an error the API answers
// 503 (one matching the context's error or inventory.ErrUnavailable),
// never succeed, and write nothing.
func checkContextDone(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	a := inventory.Item{PetID: 1, Quantity: 5, Status: inventory.StatusPending}
	if err := s.Put(ctx, a); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel2()
	for _, dc := range []struct {
		name  string
		ctx   context.Context
		cause error
	}{{"cancelled", cancelled, context.Canceled}, {"past its deadline", expired, context.DeadlineExceeded}} {
		bad := func(op string, err error) error {
			if err == nil {
				return fmt.Errorf("%s with a context %s succeeded, want an error", op, dc.name)
			}
			if !errors.Is(err, dc.cause) && !errors.Is(err, inventory.ErrUnavailable) {
				return fmt.Errorf("%s with a context %s returned %v, want an error matching %v or inventory.ErrUnavailable", op, dc.name, err, dc.cause)
			}
			return nil
		}
		_, err := s.List(dc.ctx)
		if e := bad("List", err); e != nil {
			return e
		}
		_, err = s.SetQuantity(dc.ctx, a.PetID, 9)
		if e := bad("SetQuantity", err); e != nil {
			return e
		}
		if _, err := s.SetQuantity(dc.ctx, 2, 9); err == nil {
			return fmt.Errorf("SetQuantity of a pet with no entry with a context %s succeeded, want an error", dc.name)
		}
		if e := bad("Put", s.Put(dc.ctx, inventory.Item{PetID: 3, Quantity: 3, Status: inventory.StatusSold})); e != nil {
			return e
		}
		if e := bad("Delete", s.Delete(dc.ctx, a.PetID)); e != nil {
			return e
		}
		if err := listEquals(ctx, s, []inventory.Item{a}, "after calls with a context "+dc.name+" (they must write nothing)"); err != nil {
			return err
		}
	}
	return nil
}

// checkPutIfEmpty checks a store that implements inventory.Seeder: seeds
// are written whole into an empty store and reported written, refused
// (writing nothing, reporting false and no error) by a store holding any
// entry, accepted again once every entry is deleted, and refused with an
// error and nothing written under a context that is done. A seed of 700
// pets is written whole, for backends that write seeds in chunks. For a
// ChangeLister, a cursor held from before a seed leads to the seeded
// state.
func checkPutIfEmpty(ctx context.Context, s inventory.Store, _ Config, _ logf) error {
	sd := s.(inventory.Seeder)
	seed := []inventory.Item{
		{PetID: 7, Quantity: 7, Status: inventory.StatusAvailable},
		{PetID: -3, Quantity: 0, Status: inventory.StatusSold},
		{PetID: math.MaxInt64, Quantity: inventory.MaxQuantity, Status: inventory.StatusPending},
	}
	var h *holder
	if cl, ok := s.(inventory.ChangeLister); ok {
		h = newHolder(cl, "a caller holding the cursor of the empty store")
		if _, err := h.read(ctx); err != nil {
			return err
		}
	}
	wrote, err := sd.PutIfEmpty(ctx, seed...)
	if err != nil || !wrote {
		return fmt.Errorf("PutIfEmpty of %d items into an empty store = %v, %v; want true, nil", len(seed), wrote, err)
	}
	if err := listEquals(ctx, s, sorted(seed), "after PutIfEmpty into an empty store"); err != nil {
		return err
	}
	if err := heldFollows(ctx, s, h, "after PutIfEmpty"); err != nil {
		return err
	}
	lone := []inventory.Item{{PetID: 9, Quantity: 9, Status: inventory.StatusSold}}
	if err := checkSeedRefusedUntilEmpty(ctx, s, sd, seed, lone); err != nil {
		return err
	}
	if err := checkSeedContextDone(ctx, s, sd, lone); err != nil {
		return err
	}
	return checkLargeSeed(ctx, s, sd, h)
}

// heldFollows, for a ChangeLister (h not nil), checks that h's read of the
// changes since its cursor leads to what List returns.
func heldFollows(ctx context.Context, s inventory.Store, h *holder, when string) error {
	if h == nil {
		return nil
	}
	if _, err := h.read(ctx); err != nil {
		return err
	}
	return heldEqualsList(ctx, s, h, when)
}

// checkSeedRefusedUntilEmpty, on a store holding seed: PutIfEmpty writes
// nothing and reports false, whether its seed names a new pet or a seeded
// one, and still once the store is deleted down to one entry; then it
// deletes that last entry, leaving the store empty.
func checkSeedRefusedUntilEmpty(ctx context.Context, s inventory.Store, sd inventory.Seeder, seed, lone []inventory.Item) error {
	for _, again := range [][]inventory.Item{
		{{PetID: 8, Quantity: 1, Status: inventory.StatusSold}},
		{{PetID: 7, Quantity: 70, Status: inventory.StatusSold}}, // a seeded pet
	} {
		wrote, err := sd.PutIfEmpty(ctx, again...)
		if err != nil || wrote {
			return fmt.Errorf("PutIfEmpty(%+v) into a store holding %d entries = %v, %v; want false, nil", again, len(seed), wrote, err)
		}
		if err := listEquals(ctx, s, sorted(seed), fmt.Sprintf("after PutIfEmpty(%+v) into a store holding entries (it must write nothing)", again)); err != nil {
			return err
		}
	}

	// Deleted down to one entry the store is not empty; down to none, it is.
	for _, it := range seed[1:] {
		if err := s.Delete(ctx, it.PetID); err != nil {
			return fmt.Errorf("Delete(%d): %w", it.PetID, err)
		}
	}
	if wrote, err := sd.PutIfEmpty(ctx, lone...); err != nil || wrote {
		return fmt.Errorf("PutIfEmpty into a store holding one entry = %v, %v; want false, nil", wrote, err)
	}
	if err := s.Delete(ctx, seed[0].PetID); err != nil {
		return fmt.Errorf("Delete(%d): %w", seed[0].PetID, err)
	}
	return nil
}

// checkSeedContextDone, on an empty store: PutIfEmpty under a context
// cancelled or past its deadline fails and writes nothing.
func checkSeedContextDone(ctx context.Context, s inventory.Store, sd inventory.Seeder, lone []inventory.Item) error {
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel2()
	for _, dc := range []struct {
		name  string
		ctx   context.Context
		cause error
	}{{"cancelled", cancelled, context.Canceled}, {"past its deadline", expired, context.DeadlineExceeded}} {
		wrote, err := sd.PutIfEmpty(dc.ctx, lone...)
		if wrote || err == nil || !errors.Is(err, dc.cause) && !errors.Is(err, inventory.ErrUnavailable) {
			return fmt.Errorf("PutIfEmpty with a context %s = %v, %v; want false and an error matching %v or inventory.ErrUnavailable", dc.name, wrote, err, dc.cause)
		}
		if err := listEquals(ctx, s, nil, "after PutIfEmpty with a context "+dc.name+" (it must write nothing)"); err != nil {
			return err
		}
	}
	return nil
}

// checkLargeSeed, on a store emptied by Delete: a seed of 700 pets is
// written whole, and h (when not nil) follows it.
func checkLargeSeed(ctx context.Context, s inventory.Store, sd inventory.Seeder, h *holder) error {
	rng := rand.New(rand.NewPCG(3, 4))
	large := make([]inventory.Item, 700)
	for i := range large {
		large[i] = inventory.Item{PetID: int64(i*7 - 2000), Quantity: rng.IntN(inventory.MaxQuantity + 1), Status: statuses[rng.IntN(3)]}
	}
	if wrote, err := sd.PutIfEmpty(ctx, large...); err != nil || !wrote {
		return fmt.Errorf("PutIfEmpty of %d items into a store emptied by Delete = %v, %v; want true, nil", len(large), wrote, err)
	}
	if err := listEquals(ctx, s, sorted(large), fmt.Sprintf("after PutIfEmpty of %d items into a store emptied by Delete", len(large))); err != nil {
		return err
	}
	return heldFollows(ctx, s, h, fmt.Sprintf("after deletes and PutIfEmpty of %d items", len(large)))
}

// checkPutIfEmptyConcurrent has Config.Writers callers seed an empty store
// at once, each with its own 50 pets, as replicas starting together do:
// exactly one reports that it wrote, every other reports false (or fails
// with inventory.ErrUnavailable), and the store holds exactly that one's
// seed.
func checkPutIfEmptyConcurrent(ctx context.Context, s inventory.Store, c Config, _ logf) error {
	sd := s.(inventory.Seeder)
	const pets = 50
	seeds := make([][]inventory.Item, c.Writers)
	for w := range seeds {
		for i := range pets {
			// Pet 0 is in every seed, with the writer's own quantity.
			seeds[w] = append(seeds[w], inventory.Item{PetID: int64(w*pets + i), Quantity: w, Status: statuses[(w+i)%3]})
		}
		seeds[w][0].PetID = 0
	}
	type result struct {
		wrote bool
		err   error
	}
	results := make([]result, c.Writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range seeds {
		wg.Go(func() {
			<-start
			wrote, err := sd.PutIfEmpty(ctx, seeds[w]...)
			results[w] = result{wrote, err}
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for w, r := range results {
		switch {
		case r.err != nil && !errors.Is(r.err, inventory.ErrUnavailable):
			return fmt.Errorf("PutIfEmpty by writer %d of %d seeding at once: %w (only inventory.ErrUnavailable is allowed)", w, c.Writers, r.err)
		case r.err != nil && r.wrote:
			return fmt.Errorf("PutIfEmpty by writer %d of %d seeding at once returned true and the error %v", w, c.Writers, r.err)
		case r.wrote && winner >= 0:
			return fmt.Errorf("PutIfEmpty by writers %d and %d of %d seeding at once both returned true; want exactly one", winner, w, c.Writers)
		case r.wrote:
			winner = w
		}
	}
	if winner < 0 {
		unavailable := 0
		for _, r := range results {
			if r.err != nil {
				unavailable++
			}
		}
		if unavailable == 0 {
			return fmt.Errorf("PutIfEmpty by %d writers seeding an empty store at once: every one returned false and no error; want exactly one true", c.Writers)
		}
		return listEquals(ctx, s, nil, fmt.Sprintf("after %d writers seeded at once, %d failed with ErrUnavailable and none reported writing (the store must hold nothing)", c.Writers, unavailable))
	}
	return listEquals(ctx, s, sorted(seeds[winner]), fmt.Sprintf("after %d writers seeded at once and writer %d reported writing (the store must hold exactly its seed)", c.Writers, winner))
}
