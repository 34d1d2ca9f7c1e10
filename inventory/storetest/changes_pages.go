package storetest

//lint:file-ignore ST1005 failure messages begin with the name of the Store method they are about (ListChanges, Put).

import (
	"context"
	"fmt"

	"github.com/petinventory/petinventory/inventory"
)

// pageWrites is how many single changes checkListChangesBetweenPages
// writes after a cursor: several pages of at most 4 changes.
const pageWrites = 12

// checkListChangesBetweenPages trims or loses the store's log
// (Config.TrimLog, Config.LoseLog), with or without writes after, while a
// caller reads the changes since its cursor, between two pages of that
// read (Config.BetweenPages): the caller must reach List's state, never
// skip the changes the fault removed; then its cursor must follow the
// store again.
func checkListChangesBetweenPages(ctx context.Context, s inventory.Store, c Config, log logf) error {
	if c.BetweenPages == nil {
		log("Config.BetweenPages is nil: a log moving between two pages of a read is not checked")
		return nil
	}
	cl, ok := changeLister(s, log)
	if !ok {
		return nil
	}
	faults := pageFaults(c)
	if len(faults) == 0 {
		log("Config.TrimLog and Config.LoseLog are nil: a log moving between two pages of a read is not checked")
		return nil
	}
	pets := make([]inventory.Item, pageWrites)
	for i := range pets {
		pets[i] = inventory.Item{PetID: int64(i + 1), Quantity: 1, Status: inventory.StatusAvailable}
	}
	if err := s.Put(ctx, pets...); err != nil {
		return fmt.Errorf("Put: %w", err)
	}
	h := newHolder(cl, "the caller")
	if _, err := h.read(ctx); err != nil {
		return err
	}
	for round, f := range faults {
		if err := readAcrossPageFault(ctx, s, c, h, round, f); err != nil {
			return err
		}
	}
	return nil
}

// pageFault is a change of the store's log that checkListChangesBetweenPages
// makes between two pages of a read.
type pageFault struct {
	name string
	do   func(ctx context.Context, s inventory.Store) error
}

// pageFaults lists the faults c makes possible: trimming the log and losing
// it, each alone and followed by a write.
func pageFaults(c Config) []pageFault {
	write := func(ctx context.Context, s inventory.Store) error {
		_, err := s.SetQuantity(ctx, pageWrites, 1000)
		return err
	}
	var faults []pageFault
	for _, f := range []pageFault{{"trimming the log", c.TrimLog}, {"losing the log", c.LoseLog}} {
		if f.do == nil {
			continue
		}
		faults = append(faults, f, pageFault{f.name + " and writing", func(ctx context.Context, s inventory.Store) error {
			if err := f.do(ctx, s); err != nil {
				return err
			}
			return write(ctx, s)
		}})
	}
	return faults
}

// readAcrossPageFault is one round of checkListChangesBetweenPages: it
// writes pageWrites changes after h's cursor, has h read them with fault f
// made between two pages, and checks that h reached List's state, that its
// new cursor gets no change, and that it follows a write after.
func readAcrossPageFault(ctx context.Context, s inventory.Store, c Config, h *holder, round int, f pageFault) error {
	for i := range pageWrites {
		if _, err := s.SetQuantity(ctx, int64(i+1), 10*(round+1)+i); err != nil {
			return fmt.Errorf("SetQuantity: %w", err)
		}
	}
	var ran bool
	var ferr error
	c.BetweenPages(s, func() { ran = true; ferr = f.do(ctx, s) })
	when := fmt.Sprintf("%s between two pages of a read of %d changes", f.name, pageWrites)
	if _, err := h.read(ctx); err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	if ferr != nil {
		return fmt.Errorf("%s: %w", f.name, ferr)
	}
	if !ran {
		return fmt.Errorf("%s: Config.BetweenPages never ran the fault: the store read %d changes in one page; make its pages hold at most 4", when, pageWrites)
	}
	if err := heldEqualsList(ctx, s, h, when); err != nil {
		return err
	}
	if err := readUnchanged(ctx, h, when); err != nil {
		return err
	}
	if _, err := s.SetQuantity(ctx, 1, 5000+round); err != nil {
		return fmt.Errorf("SetQuantity: %w", err)
	}
	if _, err := h.read(ctx); err != nil {
		return fmt.Errorf("after %s and a write: %w", when, err)
	}
	return heldEqualsList(ctx, s, h, "after "+when+" and a write")
}
