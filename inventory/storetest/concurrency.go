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

// listDuring lists s over and over from its own goroutine, checking each
// listing with check, until wait returns (or a problem stops the check); it
// returns how many listings it took. what names the listings in a failure.
func listDuring(ctx context.Context, s inventory.Store, p *problems, what string, check func([]inventory.Item) error, wait func()) int {
	done := make(chan struct{})
	var lister sync.WaitGroup
	lists := 0
	lister.Go(func() {
		for {
			got, err := s.List(ctx)
			if err != nil {
				p.add("%s: %w", what, err)
				return
			}
			lists++
			if err := check(got); err != nil {
				p.add("%s: %w", what, err)
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	wait()
	close(done)
	lister.Wait()
	return lists
}

// checkConcurrentUpdates runs c.Writers goroutines, each making c.Updates
// updates of one hot pet (quantities unique across all writers) and of its
// own pet (1, 2, …, c.Updates), while another goroutine lists.
func checkConcurrentUpdates(ctx context.Context, s inventory.Store, c Config, log logf) error {
	run, items := newHotPetRun(c)
	if err := s.Put(ctx, items...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &problems{cancel: cancel}
	var writers sync.WaitGroup
	for w := range run.W {
		writers.Go(func() { run.write(ctx, s, p, w) })
	}
	sn := &snapshot{status: run.status, okQty: run.okQty}
	lists := listDuring(ctx, s, p, "List during updates", sn.check, writers.Wait)
	if err := p.err(); err != nil {
		return err
	}
	log("%d writers × %d updates of one hot pet and of their own pets; %d listings meanwhile", run.W, run.U, lists)

	final, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("List after the updates: %w", err)
	}
	if err := sn.check(final); err != nil {
		return fmt.Errorf("List after the updates: %w", err)
	}
	return run.checkFinal(final)
}

// hotPetRun is the set-up of checkConcurrentUpdates: W writers each update
// the hot pet and their own pet U times; a bystander pet is never updated.
type hotPetRun struct {
	W, U   int
	status map[int64]inventory.Status // every pet's status, which no update changes
}

const hotPet = int64(1) << 40

var bystander = inventory.Item{PetID: 7, Quantity: 7, Status: inventory.StatusSold}

// newHotPetRun makes the run for c and the items to put before it: the hot
// pet and each writer's own pet at quantity 0, and the bystander.
func newHotPetRun(c Config) (*hotPetRun, []inventory.Item) {
	run := &hotPetRun{W: c.Writers, U: c.Updates, status: map[int64]inventory.Status{hotPet: inventory.StatusPending, bystander.PetID: bystander.Status}}
	items := []inventory.Item{{PetID: hotPet, Status: inventory.StatusPending}, bystander}
	for w := range run.W {
		st := statuses[w%3]
		run.status[run.own(w)] = st
		items = append(items, inventory.Item{PetID: run.own(w), Status: st})
	}
	return run, items
}

// own is writer w's own pet: on both sides of zero, all below the hot pet.
func (run *hotPetRun) own(w int) int64 {
	if w%2 == 0 {
		return -int64(w+1) * 1000
	}
	return int64(w+1) * 1000
}

// write is writer w's updates: the hot pet to w*U+u+1 (unique across
// writers), then its own pet to u+1, for u in 0..U-1; each update must
// return its own write.
func (run *hotPetRun) write(ctx context.Context, s inventory.Store, p *problems, w int) {
	id := run.own(w)
	for u := range run.U {
		q := w*run.U + u + 1
		got, err := s.SetQuantity(ctx, hotPet, q)
		if err != nil {
			p.add("writer %d, update %d: SetQuantity(hot pet %d, %d): %w", w, u, hotPet, q, err)
			return
		}
		if want := (inventory.Item{PetID: hotPet, Quantity: q, Status: inventory.StatusPending}); got != want {
			p.add("writer %d: SetQuantity(hot pet %d, %d) returned %+v, want %+v: every update returns its own write", w, hotPet, q, got, want)
			return
		}
		got, err = s.SetQuantity(ctx, id, u+1)
		if err != nil {
			p.add("writer %d, update %d: SetQuantity(own pet %d, %d): %w", w, u, id, u+1, err)
			return
		}
		if want := (inventory.Item{PetID: id, Quantity: u + 1, Status: run.status[id]}); got != want {
			p.add("writer %d: SetQuantity(own pet %d, %d) returned %+v, want %+v: every update returns its own write", w, id, u+1, got, want)
			return
		}
	}
}

// okQty is the quantity rule of a listing during the run (see snapshot):
// the hot pet shows a quantity some writer wrote, the bystander its own,
// and each own pet no less than the listing before showed.
func (run *hotPetRun) okQty(it inventory.Item, prev int) error {
	switch {
	case it.PetID == hotPet:
		if it.Quantity < 0 || it.Quantity > run.W*run.U {
			return fmt.Errorf("quantity %d of the hot pet was never written (writes are 0..%d)", it.Quantity, run.W*run.U)
		}
	case it.PetID == bystander.PetID:
		if it.Quantity != bystander.Quantity {
			return fmt.Errorf("pet %d was never updated, want quantity %d", it.PetID, bystander.Quantity)
		}
	default:
		if it.Quantity < prev || it.Quantity > run.U {
			return fmt.Errorf("its writer writes 1..%d in order, and the listing before showed %d: a listing older than the one before it", run.U, prev)
		}
	}
	return nil
}

// checkFinal checks the listing after every writer is done: no write lost.
func (run *hotPetRun) checkFinal(final []inventory.Item) error {
	for _, it := range final {
		switch {
		case it.PetID == hotPet:
			// The last write to land is the last write of one of the
			// writers, since each writer's writes are in order.
			if it.Quantity%run.U != 0 || it.Quantity == 0 {
				return fmt.Errorf("after the updates the hot pet holds %d, which is not the last write of any writer (those are multiples of %d): a lost or invented write", it.Quantity, run.U)
			}
		case it.PetID != bystander.PetID:
			if it.Quantity != run.U {
				return fmt.Errorf("after the updates pet %d holds %d, want %d, its writer's last write: an update was lost", it.PetID, it.Quantity, run.U)
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
	run, items := newChurnRun(c)
	if err := s.Put(ctx, items...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &problems{cancel: cancel}
	var writers, churner sync.WaitGroup
	for w := range run.W {
		writers.Go(func() { run.update(ctx, s, p, w) })
	}
	churner.Go(func() { run.churn(ctx, s, p) })
	prev := map[int64]int{}
	listDuring(ctx, s, p, "List during puts and deletes", func(got []inventory.Item) error {
		return checkChurnSnapshot(got, run.status, run.churned, prev, run.U)
	}, writers.Wait)
	churner.Wait()
	if err := p.err(); err != nil {
		return err
	}
	log("%d updates succeeded and %d failed with ErrUnavailable while other pets were put and deleted", run.succeeded.Load(), run.unavailable.Load())
	if run.succeeded.Load() == 0 {
		return fmt.Errorf("all %d updates failed with ErrUnavailable while other pets were put and deleted", run.W*run.U)
	}

	final, err := s.List(ctx)
	if err != nil {
		return fmt.Errorf("List after the updates: %w", err)
	}
	if err := checkChurnSnapshot(final, run.status, nil, prev, run.U); err != nil {
		return fmt.Errorf("List after the updates (every other pet was deleted): %w", err)
	}
	return run.checkFinal(final)
}

// churnRun is the set-up and the record of checkConcurrentPutDelete: W
// writers each update their own pet U times while U rounds put and delete
// the churned pets, interleaved with theirs.
type churnRun struct {
	W, U       int
	status     map[int64]inventory.Status // each updated pet's status
	churned    map[int64]inventory.Item   // each churned pet as it is put
	churnItems []inventory.Item

	unavailable, succeeded atomic.Int64
	lastOK                 []int   // last acknowledged write of each writer
	failedSince            [][]int // writes that failed after it, which may or may not have landed
}

// newChurnRun makes the run for c and the items to put before it: each
// writer's own pet at quantity 0.
func newChurnRun(c Config) (*churnRun, []inventory.Item) {
	const churners = 4
	W := min(c.Writers, 4)
	run := &churnRun{W: W, U: c.Updates, status: map[int64]inventory.Status{}, churned: map[int64]inventory.Item{},
		lastOK: make([]int, W), failedSince: make([][]int, W)}
	var items []inventory.Item
	for w := range W {
		st := statuses[(w+1)%3]
		run.status[run.own(w)] = st
		items = append(items, inventory.Item{PetID: run.own(w), Status: st})
	}
	for k := range churners {
		it := inventory.Item{PetID: int64(k)*10 + 5, Quantity: 100 + k, Status: statuses[k%3]} // interleaved with the updated pets
		run.churned[it.PetID] = it
		run.churnItems = append(run.churnItems, it)
	}
	return run, items
}

// own is writer w's own pet.
func (run *churnRun) own(w int) int64 { return int64(w) * 10 }

// update is writer w's updates of its own pet to 1..U, in order, recording
// which were acknowledged and which failed with ErrUnavailable.
func (run *churnRun) update(ctx context.Context, s inventory.Store, p *problems, w int) {
	id := run.own(w)
	for u := range run.U {
		q := u + 1
		got, err := s.SetQuantity(ctx, id, q)
		switch {
		case err == nil:
			if want := (inventory.Item{PetID: id, Quantity: q, Status: run.status[id]}); got != want {
				p.add("SetQuantity(%d, %d) returned %+v, want %+v", id, q, got, want)
				return
			}
			run.succeeded.Add(1)
			run.lastOK[w], run.failedSince[w] = q, nil
		case errors.Is(err, inventory.ErrUnavailable):
			run.unavailable.Add(1)
			run.failedSince[w] = append(run.failedSince[w], q)
		default:
			p.add("SetQuantity(%d, %d) while other pets are put and deleted: %w (only ErrUnavailable is allowed)", id, q, err)
			return
		}
	}
}

// churn puts the churned pets and deletes them again, U times.
func (run *churnRun) churn(ctx context.Context, s inventory.Store, p *problems) {
	for i := range run.U {
		if err := s.Put(ctx, run.churnItems...); err != nil {
			p.add("Put of other pets, round %d: %w", i, err)
			return
		}
		for _, it := range run.churnItems {
			if err := s.Delete(ctx, it.PetID); err != nil {
				p.add("Delete(%d) of a pet just put, round %d: %w", it.PetID, i, err)
				return
			}
		}
	}
}

// checkFinal checks the listing after every writer is done: each pet holds
// its writer's last acknowledged write, or one that failed after it.
func (run *churnRun) checkFinal(final []inventory.Item) error {
	for w := range run.W {
		got := final[w].Quantity
		if got != run.lastOK[w] && !slices.Contains(run.failedSince[w], got) {
			return fmt.Errorf("after the updates pet %d holds %d, but its last acknowledged write was %d (and the failed ones after it %v): an update was lost", run.own(w), got, run.lastOK[w], run.failedSince[w])
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
