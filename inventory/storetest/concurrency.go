package storetest

//lint:file-ignore ST1005 failure messages begin with the name of the Store method they are about (List, Put, Delete).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/petinventory/petinventory/inventory"
)

// problems collects failures from many goroutines. The first one cancels
// the check's context so that every goroutine stops early; the errors that
// cancellation causes are counted, not shown, since the first one is the
// cause.
type problems struct {
	mu     sync.Mutex
	first  []error
	more   int
	cancel context.CancelFunc
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.first) < 5 {
		p.first = append(p.first, fmt.Errorf(format, args...))
	} else {
		p.more++
	}
	p.cancel()
}

func (p *problems) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.first) == 0 {
		return nil
	}
	errs := p.first
	if p.more > 0 {
		errs = append(errs, fmt.Errorf("… and %d more (after the first failure stopped the check)", p.more))
	}
	return errors.Join(errs...)
}

// snapshot checks one listing taken while the store is being updated:
// ascending ids, exactly the expected pets, each with its own status (a
// status that changed would be an entry mixing two writes), and each
// quantity allowed by okQty. okQty also sees the quantity the previous
// listing showed (-1 the first time), so it can check that listings never
// go back in time.
type snapshot struct {
	status map[int64]inventory.Status
	okQty  func(it inventory.Item, prev int) error
	prev   map[int64]int
}

func (sn *snapshot) check(items []inventory.Item) error {
	if len(items) != len(sn.status) {
		return fmt.Errorf("List returned %d items, want %d (one per pet): %+v", len(items), len(sn.status), items)
	}
	if sn.prev == nil {
		sn.prev = make(map[int64]int, len(items))
	}
	for i, it := range items {
		if i > 0 && items[i-1].PetID >= it.PetID {
			return fmt.Errorf("List is not in strictly ascending petId order: item %d is pet %d, item %d is pet %d", i-1, items[i-1].PetID, i, it.PetID)
		}
		st, ok := sn.status[it.PetID]
		if !ok {
			return fmt.Errorf("List shows pet %d, which has no entry", it.PetID)
		}
		if it.Status != st {
			return fmt.Errorf("List shows %+v, but its status is %q and only its quantity was ever updated: a torn entry", it, st)
		}
		prev, seen := sn.prev[it.PetID]
		if !seen {
			prev = -1
		}
		if err := sn.okQty(it, prev); err != nil {
			return fmt.Errorf("List shows %+v: %w", it, err)
		}
		sn.prev[it.PetID] = it.Quantity
	}
	return nil
}

// checkConcurrentUpdates runs c.Writers goroutines, each making c.Updates
// updates of one hot pet (quantities unique across all writers) and of its
// own pet (1, 2, …, c.Updates), while another goroutine lists.
func checkConcurrentUpdates(ctx context.Context, s inventory.Store, c Config, log logf) error {
	W, U := c.Writers, c.Updates
	const hot = int64(1) << 40
	own := func(w int) int64 { // on both sides of zero, all below the hot pet
		if w%2 == 0 {
			return -int64(w+1) * 1000
		}
		return int64(w+1) * 1000
	}
	bystander := inventory.Item{PetID: 7, Quantity: 7, Status: inventory.StatusSold}
	status := map[int64]inventory.Status{hot: inventory.StatusPending, bystander.PetID: bystander.Status}
	items := []inventory.Item{{PetID: hot, Status: inventory.StatusPending}, bystander}
	for w := range W {
		st := statuses[w%3]
		status[own(w)] = st
		items = append(items, inventory.Item{PetID: own(w), Status: st})
	}
	if err := s.Put(ctx, items...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &problems{cancel: cancel}
	var writers sync.WaitGroup
	for w := range W {
		writers.Go(func() {
			id := own(w)
			for u := range U {
				q := w*U + u + 1
				got, err := s.SetQuantity(ctx, hot, q)
				if err != nil {
					p.add("writer %d, update %d: SetQuantity(hot pet %d, %d): %w", w, u, hot, q, err)
					return
				}
				if want := (inventory.Item{PetID: hot, Quantity: q, Status: inventory.StatusPending}); got != want {
					p.add("writer %d: SetQuantity(hot pet %d, %d) returned %+v, want %+v: every update returns its own write", w, hot, q, got, want)
					return
				}
				got, err = s.SetQuantity(ctx, id, u+1)
				if err != nil {
					p.add("writer %d, update %d: SetQuantity(own pet %d, %d): %w", w, u, id, u+1, err)
					return
				}
				if want := (inventory.Item{PetID: id, Quantity: u + 1, Status: status[id]}); got != want {
					p.add("writer %d: SetQuantity(own pet %d, %d) returned %+v, want %+v: every update returns its own write", w, id, u+1, got, want)
					return
				}
			}
		})
	}

	sn := &snapshot{status: status, okQty: func(it inventory.Item, prev int) error {
		switch {
		case it.PetID == hot:
			if it.Quantity < 0 || it.Quantity > W*U {
				return fmt.Errorf("quantity %d of the hot pet was never written (writes are 0..%d)", it.Quantity, W*U)
			}
		case it.PetID == bystander.PetID:
			if it.Quantity != bystander.Quantity {
				return fmt.Errorf("pet %d was never updated, want quantity %d", it.PetID, bystander.Quantity)
			}
		default:
			if it.Quantity < prev || it.Quantity > U {
				return fmt.Errorf("its writer writes 1..%d in order, and the listing before showed %d: a listing older than the one before it", U, prev)
			}
		}
		return nil
	}}
	done := make(chan struct{})
	var lister sync.WaitGroup
	lists := 0
	lister.Go(func() {
		for {
			got, err := s.List(ctx)
			if err != nil {
				p.add("List during updates: %w", err)
				return
			}
			lists++
			if err := sn.check(got); err != nil {
				p.add("List during updates: %w", err)
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	writers.Wait()
	close(done)
	lister.Wait()
	if err := p.err(); err != nil {
		return err
	}
	log("%d writers × %d updates of one hot pet and of their own pets; %d listings meanwhile", W, U, lists)

	final, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("List after the updates: %w", err)
	}
	if err := sn.check(final); err != nil {
		return fmt.Errorf("List after the updates: %w", err)
	}
	for _, it := range final {
		switch {
		case it.PetID == hot:
			// The last write to land is the last write of one of the
			// writers, since each writer's writes are in order.
			if it.Quantity%U != 0 || it.Quantity == 0 {
				return fmt.Errorf("after the updates the hot pet holds %d, which is not the last write of any writer (those are multiples of %d): a lost or invented write", it.Quantity, U)
			}
		case it.PetID != bystander.PetID:
			if it.Quantity != U {
				return fmt.Errorf("after the updates pet %d holds %d, want %d, its writer's last write: an update was lost", it.PetID, it.Quantity, U)
			}
		}
	}
	return nil
}

// checkConcurrentPutDelete updates a few pets, each from its own goroutine,
// while another goroutine puts and deletes other pets and a third lists.
// An update may fail with ErrUnavailable (a backend may give up on an
// optimistic transaction that keeps being aborted), but it must never fail
// otherwise, nor return a wrong item, nor lose an acknowledged write.
func checkConcurrentPutDelete(ctx context.Context, s inventory.Store, c Config, log logf) error {
	W, U := min(c.Writers, 4), c.Updates
	own := func(w int) int64 { return int64(w) * 10 }
	const churners = 4
	churn := func(k int) inventory.Item { // interleaved with the updated pets
		return inventory.Item{PetID: int64(k)*10 + 5, Quantity: 100 + k, Status: statuses[k%3]}
	}
	status := map[int64]inventory.Status{}
	var items []inventory.Item
	for w := range W {
		st := statuses[(w+1)%3]
		status[own(w)] = st
		items = append(items, inventory.Item{PetID: own(w), Status: st})
	}
	if err := s.Put(ctx, items...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	churned := map[int64]inventory.Item{}
	var churnItems []inventory.Item
	for k := range churners {
		churned[churn(k).PetID] = churn(k)
		churnItems = append(churnItems, churn(k))
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &problems{cancel: cancel}
	var unavailable, succeeded atomic.Int64
	lastOK := make([]int, W)        // last acknowledged write of each writer
	failedSince := make([][]int, W) // writes that failed after it, which may or may not have landed
	var wg sync.WaitGroup
	for w := range W {
		wg.Go(func() {
			id := own(w)
			for u := range U {
				q := u + 1
				got, err := s.SetQuantity(ctx, id, q)
				switch {
				case err == nil:
					if want := (inventory.Item{PetID: id, Quantity: q, Status: status[id]}); got != want {
						p.add("SetQuantity(%d, %d) returned %+v, want %+v", id, q, got, want)
						return
					}
					succeeded.Add(1)
					lastOK[w], failedSince[w] = q, nil
				case errors.Is(err, inventory.ErrUnavailable):
					unavailable.Add(1)
					failedSince[w] = append(failedSince[w], q)
				default:
					p.add("SetQuantity(%d, %d) while other pets are put and deleted: %w (only ErrUnavailable is allowed)", id, q, err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	var others sync.WaitGroup
	others.Go(func() {
		for i := range U {
			if err := s.Put(ctx, churnItems...); err != nil {
				p.add("Put of other pets, round %d: %w", i, err)
				return
			}
			for _, it := range churnItems {
				if err := s.Delete(ctx, it.PetID); err != nil {
					p.add("Delete(%d) of a pet just put, round %d: %w", it.PetID, i, err)
					return
				}
			}
		}
	})
	prev := map[int64]int{}
	others.Go(func() {
		for {
			got, err := s.List(ctx)
			if err != nil {
				p.add("List during puts and deletes: %w", err)
				return
			}
			if err := checkChurnSnapshot(got, status, churned, prev, U); err != nil {
				p.add("List during puts and deletes: %w", err)
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	wg.Wait()
	close(done)
	others.Wait()
	if err := p.err(); err != nil {
		return err
	}
	log("%d updates succeeded and %d failed with ErrUnavailable while other pets were put and deleted", succeeded.Load(), unavailable.Load())
	if succeeded.Load() == 0 {
		return fmt.Errorf("all %d updates failed with ErrUnavailable while other pets were put and deleted", W*U)
	}

	final, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("List after the updates: %w", err)
	}
	if err := checkChurnSnapshot(final, status, nil, prev, U); err != nil {
		return fmt.Errorf("List after the updates (every other pet was deleted): %w", err)
	}
	for w := range W {
		got := final[w].Quantity
		if got != lastOK[w] && !slices.Contains(failedSince[w], got) {
			return fmt.Errorf("after the updates pet %d holds %d, but its last acknowledged write was %d (and the failed ones after it %v): an update was lost", own(w), got, lastOK[w], failedSince[w])
		}
	}
	return nil
}

// checkChurnSnapshot: the updated pets are all there with their own
// statuses and non-decreasing quantities; a put-and-deleted pet, when
// present, is exactly as put.
func checkChurnSnapshot(items []inventory.Item, status map[int64]inventory.Status, churned map[int64]inventory.Item, prev map[int64]int, U int) error {
	n := 0
	for i, it := range items {
		if i > 0 && items[i-1].PetID >= it.PetID {
			return fmt.Errorf("List is not in strictly ascending petId order: pet %d before pet %d", items[i-1].PetID, it.PetID)
		}
		if want, ok := churned[it.PetID]; ok {
			if it != want {
				return fmt.Errorf("List shows %+v, want %+v as it was put", it, want)
			}
			continue
		}
		st, ok := status[it.PetID]
		if !ok {
			return fmt.Errorf("List shows pet %d, which has no entry", it.PetID)
		}
		if it.Status != st {
			return fmt.Errorf("List shows %+v, but its status is %q and only its quantity was ever updated: a torn entry", it, st)
		}
		if it.Quantity < prev[it.PetID] || it.Quantity > U {
			return fmt.Errorf("List shows %+v; its writer writes 1..%d in order and the listing before showed %d", it, U, prev[it.PetID])
		}
		prev[it.PetID] = it.Quantity
		n++
	}
	if n != len(status) {
		return fmt.Errorf("List shows %d of the %d pets being updated: %+v", n, len(status), items)
	}
	return nil
}
