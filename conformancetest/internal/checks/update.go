package checks

import (
	"fmt"
	"net/http"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcSuccess = "CONTRACT.md §Update stock level › Success"

// Update are the checks of a valid update: its answer, and what the lists
// show after it.
var Update = []*suite.Check{
	{
		Name: "update/ok", Spec: true, Writes: true,
		Source: "spec §4.2 rule 4; " + srcSuccess,
		Rule:   "A valid update is 200 with the whole entry: the pet's petId, the new quantity and its unchanged status (tried on a pet of each status listed).",
		Run:    run(updateOK),
	},
	{
		Name: "update/replaces", Spec: true, Writes: true,
		Source: "spec §2 InventoryUpdate; " + srcSuccess,
		Rule:   "quantity replaces the stored count, it is not added to it: two updates in a row leave the second value.",
		Run:    run(updateReplaces),
	},
	{
		Name: "update/visible-in-list", Writes: true,
		Source: srcSuccess + "; " + srcList + "; CONTRACT.md §With a staleness bound",
		Rule: "After an update the strict list (Cache-Control: no-cache) shows the new quantity with the same status, and the same set of pets, at once; " +
			"the default list (no Cache-Control) shows it too, once the staleness bound given with -consistency-staleness has passed (without a bound, within 10 s).",
		Run: run(updateVisibleInList),
	},
}

// updateOK judges update/ok.
func updateOK(c checker) {
	seen := map[string]bool{}
	for i, pet := range c.Pets() {
		if seen[pet.Status] {
			continue
		}
		seen[pet.Status] = true
		c.Touch(pet.ID)
		q := newQuantity(i, pet.Qty)
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: wire.QtyBody(q)})
		c.expectItem(ex, pet.ID, q, pet.Status)
	}
}

// updateReplaces judges update/replaces.
func updateReplaces(c checker) {
	pet := c.AnyPet()
	c.Touch(pet.ID)
	q1 := newQuantity(0, pet.Qty)
	q2 := newQuantity(1, pet.Qty, q1)
	for _, q := range []int64{q1, q2} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: wire.QtyBody(q)})
		if !c.expectItem(ex, pet.ID, q, pet.Status) {
			return
		}
	}
	c.expectListed(pet.ID, q2, pet.Status)
}

// updateVisibleInList judges update/visible-in-list.
func updateVisibleInList(c checker) {
	before := c.Pets()
	pet := before[len(before)-1]
	c.Touch(pet.ID)
	q := newQuantity(2, pet.Qty)
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: wire.QtyBody(q)})
	answered := time.Now()
	if !c.expectItem(ex, pet.ID, q, pet.Status) {
		return
	}
	after := c.expectListed(pet.ID, q, pet.Status)
	if after == nil || c.Failed() {
		return
	}
	if len(after) != len(before) {
		c.Failf(nil, "the same pets before and after an update", "the list held %d pets before the update and %d after", len(before), len(after))
	}
	plain := c.defaultListAfter(answered, wire.Request{Method: http.MethodGet, Path: "/inventory"}, func(ex *wire.Exchange) bool {
		return listedWith(ex, pet.ID, q)
	})
	c.expectListedIn(plain, pet.ID, q, pet.Status)
}

// expectListed checks that the strict list (wire.StateList) shows pet id with
// qty and status, and returns the list.
func (c checker) expectListed(id, qty int64, status string) []wire.Item {
	return c.expectListedIn(c.Do(wire.StateList()), id, qty, status)
}

// expectListedIn checks that the list answer ex shows pet id with qty and
// status, and returns the list.
func (c checker) expectListedIn(ex *wire.Exchange, id, qty int64, status string) []wire.Item {
	what := "the list"
	if !ex.Req.NoCache {
		what = c.defaultListWords()
	}
	expected := fmt.Sprintf("%s shows pet %d with quantity %d and status %q", what, id, qty, status)
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return nil
	}
	items, err := wire.ParseItems(ex.Resp)
	if err != nil {
		c.Failf(ex, expected, "%v", err)
		return nil
	}
	for _, it := range items {
		if it.ID == id {
			if it.Qty != qty || it.Status != status {
				c.Failf(ex, expected, "the list shows pet %d with quantity %d and status %q", id, it.Qty, it.Status)
			}
			return items
		}
	}
	c.Failf(ex, expected, "pet %d is not in the list", id)
	return items
}

// listedWith reports whether ex is a 200 list that shows pet id with qty.
func listedWith(ex *wire.Exchange, id, qty int64) bool {
	if ex.Err != nil {
		return false
	}
	items, err := wire.ParseItems(ex.Resp)
	if err != nil {
		return false
	}
	for _, it := range items {
		if it.ID == id {
			return it.Qty == qty
		}
	}
	return false
}

// maxUndeclaredStaleness is how long defaultListAfter waits for the
// default list to show an update when no staleness bound is given: a
// deployment may have a bound the run is not told of (its lists then
// pass here, and consistency/linearizable, strict without a bound, says
// how stale they are). A bound above it must be given; a list still
// older is a cache that does not expire. A variable so that a test can
// lower it.
var maxUndeclaredStaleness = 10 * time.Second

// defaultListPoll is how often defaultListAfter lists again without a
// bound.
const defaultListPoll = 10 * time.Millisecond

// defaultListAfter sends r, a default list (no Cache-Control) of a check
// whose update was answered at answered and already seen in the strict
// list, and returns the answer to judge. With a staleness bound
// (Config.ConsistencyStaleness) it sends it once, the bound after the
// answer: a deployment keeping its bound shows the update then. Without
// one it sends it at once and, until shows is true, again every
// defaultListPoll for at most maxUndeclaredStaleness; a lag is said in
// the check's detail.
func (c checker) defaultListAfter(answered time.Time, r wire.Request, shows func(*wire.Exchange) bool) *wire.Exchange {
	if bound := c.Settings().ConsistencyStaleness; bound > 0 {
		c.Sleep(time.Until(answered.Add(bound)))
		return c.Do(r)
	}
	for first := true; ; first = false {
		sent := time.Now()
		ex := c.Do(r)
		if shows(ex) {
			if !first {
				c.UpdateResult(func(res *report.Result) {
					res.Detail = fmt.Sprintf("the default list (no Cache-Control) showed the update in a list sent %s after its answer: the deployment's lists have a staleness bound? "+
						"Give it with -consistency-staleness (Config.ConsistencyStaleness) to hold them to it", sent.Sub(answered).Round(time.Millisecond))
				})
			}
			return ex
		}
		if time.Since(answered) > maxUndeclaredStaleness {
			return ex
		}
		c.Sleep(defaultListPoll)
	}
}

// defaultListWords names a default list sent after an update, for a
// failure's expected.
func (c checker) defaultListWords() string {
	if bound := c.Settings().ConsistencyStaleness; bound > 0 {
		return fmt.Sprintf("the default list (no Cache-Control), sent the staleness bound of %v after the update's answer,", bound)
	}
	return "the default list (no Cache-Control)"
}
