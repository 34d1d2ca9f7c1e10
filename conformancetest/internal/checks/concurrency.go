package checks

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// Concurrency are the checks of updates sent at once.
var Concurrency = []*suite.Check{
	{
		Name: "concurrency/parallel-updates", Writes: true,
		Source: srcStore,
		Rule:   "Parallel updates of one pet are atomic: each 200 carries its own value and the pet's status, strict lists (Cache-Control: no-cache) taken meanwhile show only values that were written, and the final value is one that was sent.",
		Run:    run(concurrencyParallelUpdates),
	},
}

// concurrencyRounds is the number of rounds of parallel updates; with
// every round's bodies released together it catches a read-back that is
// not atomic with its write in every run, at a cost the result states.
const concurrencyRounds = 12

// listsPerRound is the number of strict lists sent at each release.
const listsPerRound = 2

// gateWait bounds the wait for every request of a round to have sent its
// headers; past it the round is released with those that did.
const gateWait = 2 * time.Second

// concurrencyParallelUpdates judges concurrency/parallel-updates: in each
// round, Parallelism updates of one pet whose connections are open and
// headers sent before their bodies are released together, with two lists
// sent at the release.
func concurrencyParallelUpdates(c checker) {
	start := time.Now()
	pet := c.AnyPet()
	c.Touch(pet.ID)
	n := c.Settings().Parallelism
	prev := pet.Qty
	released := 0
	defer func() {
		c.UpdateResult(func(res *report.Result) {
			res.Detail = fmt.Sprintf("%d rounds of %d updates of pet %d, released together once %d of them had sent their headers, and %d lists per round: %d requests in %s",
				concurrencyRounds, n, pet.ID, released, listsPerRound, res.Requests, time.Since(start).Round(time.Millisecond))
		})
	}()
	for round := range concurrencyRounds {
		values := roundValues(round, n, pet.Qty)
		allowedInList := append(slices.Clone(values), prev)
		updates, lists, ready := sendRound(c, pet.ID, values)
		if round == 0 || ready < released {
			released = ready
		}
		judgeRound(c, pet, values, allowedInList, updates, lists)
		prev = roundResult(c, pet, values)
	}
}

// roundValues are the quantities the n updates of a round send: each
// its own, none the pet's own quantity qty.
func roundValues(round, n int, qty int64) []int64 {
	values := make([]int64, n)
	next := int64(1000 + 100*round)
	for i := range values {
		if next == qty {
			next++
		}
		values[i] = next
		next++
	}
	return values
}

// sendRound sends the round's updates of pet id, one with each of
// values, releases their bodies together once their headers are out (or
// gateWait has passed), and sends listsPerRound strict lists at the
// release. It returns the answers and how many updates were ready at the
// release.
func sendRound(c checker, id int64, values []int64) (updates, lists []*wire.Exchange, ready int) {
	n := len(values)
	g := wire.NewGate(n)
	var wg sync.WaitGroup
	updates = make([]*wire.Exchange, n)
	lists = make([]*wire.Exchange, listsPerRound)
	for i := range n {
		wg.Go(func() {
			updates[i] = c.Try(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(id), ContentType: "application/json", Body: wire.QtyBody(values[i]), Gate: g})
		})
	}
	timer := time.NewTimer(gateWait)
wait:
	for ready < n {
		select {
		case <-g.Ready:
			ready++
		case <-timer.C:
			break wait
		case <-c.Ctx().Done():
			break wait
		}
	}
	timer.Stop()
	close(g.Release)
	for i := range lists {
		wg.Go(func() {
			// Strict: the quantities a list may show are those of
			// this round and the one before, which a list up to a
			// staleness bound old may not be.
			lists[i] = c.Try(wire.StateList())
		})
	}
	wg.Wait()
	return updates, lists, ready
}

// judgeRound fails the updates that did not answer their own value and
// the pet's status, and the lists that showed a quantity other than
// allowedInList (the round's values and the one before).
func judgeRound(c checker, pet wire.Item, values, allowedInList []int64, updates, lists []*wire.Exchange) {
	for i, ex := range updates {
		if ex.Err != nil {
			if c.Ctx().Err() != nil {
				c.Abort()
			}
			c.Failf(ex, "an answer to every update", "no answer: %v", ex.Err)
			continue
		}
		c.expectItem(ex, pet.ID, values[i], pet.Status)
	}
	for _, ex := range lists {
		if ex.Err != nil {
			continue
		}
		items, err := wire.ParseItems(ex.Resp)
		if err != nil {
			c.Failf(ex, "200 with the list while updates run", "%v", err)
			continue
		}
		for _, it := range items {
			if it.ID == pet.ID && (!slices.Contains(allowedInList, it.Qty) || it.Status != pet.Status) {
				c.Failf(ex, fmt.Sprintf("pet %d with a quantity among %v and status %q", pet.ID, allowedInList, pet.Status),
					"a list taken during the updates shows pet %d with quantity %d and status %q", pet.ID, it.Qty, it.Status)
			}
		}
	}
}

// roundResult lists the inventory after a round and returns the pet's
// quantity, which must be one of values.
func roundResult(c checker, pet wire.Item, values []int64) (qty int64) {
	items, ex, err := c.List()
	if err != nil {
		c.Fatalf(ex, "the list readable after the updates", "%v", err)
	}
	found := false
	for _, it := range items {
		if it.ID == pet.ID {
			found = true
			qty = it.Qty
			if !slices.Contains(values, it.Qty) {
				c.Failf(ex, fmt.Sprintf("a final quantity among the values sent %v", values), "after %d parallel updates pet %d has quantity %d, which no update sent", len(values), pet.ID, it.Qty)
			}
		}
	}
	if !found {
		c.Fatalf(ex, "the pet still listed", "pet %d is no longer listed after the parallel updates", pet.ID)
	}
	return qty
}
