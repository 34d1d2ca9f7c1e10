package storetest

//lint:file-ignore ST1005 failure messages begin with the name of the Store method they are about (ListChanges, Put).

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/petinventory/petinventory/inventory"
)

// The snapshot check's writer makes a numbered sequence of writes, each
// writing the value k (its number) somewhere, so that a state names the
// write it follows: its highest quantity. Write k is
//
//   - k%10 == 0: churn pet (k/10-1)%churnPets, put with quantity k on its
//     first visit, deleted on its second, and so on;
//   - k%10 == 5: pet k%M put with quantity k and a status that changes
//     every ten writes;
//   - otherwise: SetQuantity(pet k%M, k).
//
// Quantities only grow and only churn pets are deleted, so after write n
// the highest quantity is n, or n-1 when write n is a delete: a state with
// highest quantity m is the state after write m, or after write m+1 when
// that is a delete, or no state the store held.
const churnPets = 8

type snapOp struct {
	kind string // "put", "set" or "delete"
	item inventory.Item
}

func snapPet(i, m int) int64   { return int64(i)*3 - int64(m) } // both signs, out of order lexically
func snapChurnPet(j int) int64 { return 1<<40 + int64(j) }

func snapWrite(k, m int) snapOp {
	switch {
	case k%10 == 0:
		j := (k/10 - 1) % churnPets
		if ((k/10-1)/churnPets)%2 == 1 {
			return snapOp{"delete", inventory.Item{PetID: snapChurnPet(j)}}
		}
		return snapOp{"put", inventory.Item{PetID: snapChurnPet(j), Quantity: k, Status: statuses[j%3]}}
	case k%10 == 5:
		return snapOp{"put", inventory.Item{PetID: snapPet(k%m, m), Quantity: k, Status: statuses[(k/10)%3]}}
	}
	return snapOp{"set", inventory.Item{PetID: snapPet(k%m, m), Quantity: k}}
}

// snapModel is the state after write n, advanced one write at a time.
type snapModel struct {
	m     int
	n     int
	pets  []inventory.Item // pet i at i
	churn [churnPets]inventory.Item
	there [churnPets]bool
}

func newSnapModel(m int) *snapModel {
	sm := &snapModel{m: m, pets: make([]inventory.Item, m)}
	for i := range sm.pets {
		sm.pets[i] = inventory.Item{PetID: snapPet(i, m), Status: statuses[i%3]}
	}
	return sm
}

func (sm *snapModel) advance(to int) {
	for ; sm.n < to; sm.n++ {
		k := sm.n + 1
		op := snapWrite(k, sm.m)
		switch {
		case k%10 == 0:
			j := (k/10 - 1) % churnPets
			sm.churn[j], sm.there[j] = op.item, op.kind == "put"
		case op.kind == "put":
			sm.pets[k%sm.m] = op.item
		default:
			sm.pets[k%sm.m].Quantity = k
		}
	}
}

func (sm *snapModel) items() []inventory.Item {
	out := make([]inventory.Item, 0, sm.m+churnPets)
	out = append(out, sm.pets...)
	for j := range churnPets {
		if sm.there[j] {
			out = append(out, sm.churn[j])
		}
	}
	return out
}

// match checks that items (by ascending PetID) is the state after some
// write at or after the model's, and advances the model to it.
func (sm *snapModel) match(items []inventory.Item) error {
	high := 0
	for _, it := range items {
		high = max(high, it.Quantity)
	}
	if high < sm.n && !(high == sm.n-1 && snapWrite(sm.n, sm.m).kind == "delete") {
		return fmt.Errorf("its highest quantity is %d, but this reader already saw the state after write %d: a state older than one read before", high, sm.n)
	}
	sm.advance(high)
	d := diffItems(items, sm.items())
	if d != "" && snapWrite(high+1, sm.m).kind == "delete" {
		sm.advance(high + 1)
		if d2 := diffItems(items, sm.items()); d2 == "" {
			return nil
		}
	}
	if d != "" {
		return fmt.Errorf("its highest quantity %d says it is the state after write %d, but %s: not a state the store held", high, high, d)
	}
	return nil
}

// checkListChangesSnapshot holds c.SnapshotPets pets while a writer makes
// the sequence of snapWrite and two readers list with ListChanges, one
// always from "" (every entry), one from its own cursor (applying each
// Log): every state either reaches must be one the store held, never older
// than the one it reached before, and, once the writer stops, List's.
func checkListChangesSnapshot(ctx context.Context, s inventory.Store, c Config, log logf) error {
	cl, ok := changeLister(s, log)
	if !ok {
		return nil
	}
	m := c.SnapshotPets
	seed := newSnapModel(m)
	if err := s.Put(ctx, seed.items()...); err != nil {
		return fmt.Errorf("Put of %d pets: %w", m, err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := &snapRun{m: m, p: &problems{cancel: cancel}, done: make(chan struct{})}
	readers := [2]*holder{
		newHolder(cl, `the reader from ""`),
		newHolder(cl, "the reader from its own cursor"),
	}
	var wg sync.WaitGroup
	wg.Go(func() { run.write(ctx, s) })
	for r, h := range readers {
		wg.Go(func() { run.read(ctx, r, h) })
	}
	wg.Wait()
	if err := run.p.err(); err != nil {
		return err
	}
	log("%d pets, %d writes; %d reads from \"\", %d from a cursor (%d answered with a Log, %d with every entry)",
		m, run.written.Load(), run.reads[0].Load(), run.reads[1].Load(), readers[1].logs, readers[1].fulls)
	for _, h := range readers {
		if err := heldEqualsList(ctx, s, h, "after the writer stopped"); err != nil {
			return err
		}
	}
	return nil
}

// snapRun is the shared record of checkListChangesSnapshot's writer and
// readers.
type snapRun struct {
	m       int // pets
	p       *problems
	done    chan struct{} // closed when the writer stops
	reads   [2]atomic.Int64
	written atomic.Int64 // the last write made
}

// snapMinReads is how many reads each reader makes, at least, while the
// writer writes (unless the quantities run out).
const snapMinReads = 20

// write makes the writes of snapWrite in order until each reader has read
// snapMinReads times during them and every pet was written, or until the
// quantities run out.
func (run *snapRun) write(ctx context.Context, s inventory.Store) {
	defer close(run.done)
	for k := 1; k <= inventory.MaxQuantity; k++ {
		if k > 2*run.m && run.reads[0].Load() >= snapMinReads && run.reads[1].Load() >= snapMinReads {
			return
		}
		op := snapWrite(k, run.m)
		var err error
		switch op.kind {
		case "put":
			err = s.Put(ctx, op.item)
		case "delete":
			err = s.Delete(ctx, op.item.PetID)
		default:
			_, err = s.SetQuantity(ctx, op.item.PetID, op.item.Quantity)
		}
		if err != nil {
			run.p.add("write %d, %s of %+v: %w", k, op.kind, op.item, err)
			return
		}
		run.written.Store(int64(k))
	}
}

// read is reader r's reads with h (reader 0 always from ""), each matched
// against the states the writer made, until one more read after the
// writer stopped, which must reach the writer's last state.
func (run *snapRun) read(ctx context.Context, r int, h *holder) {
	sm := newSnapModel(run.m)
	last := false
	for !last {
		select {
		case <-run.done:
			last = true // one more read after the writer stopped
		default:
		}
		if r == 0 {
			h.cursor = ""
		}
		ch, err := h.read(ctx)
		if err != nil {
			run.p.add("during writes: %w", err)
			return
		}
		run.reads[r].Add(1)
		if err := sm.match(h.items()); err != nil {
			run.p.add("read %d by %s (Full %v, %d changes): %w", run.reads[r].Load(), h.name, ch.Full, len(ch.Log), err)
			return
		}
	}
	if n := int(run.written.Load()); sm.n != n {
		run.p.add("%s's read after the writer stopped reached the state after write %d, want %d, the last one", h.name, sm.n, n)
	}
}
