package checks

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const (
	srcList = "CONTRACT.md §List inventory"
)

// List are the checks of the list's answer: its status, schema, order,
// and what its query changes (nothing).
var List = []*suite.Check{
	{
		Name: "list/ok", Spec: true,
		Source: "spec §4.1; " + srcList,
		Rule:   "GET /inventory answers 200 with a JSON array of InventoryItem: [] when the inventory is empty, never null.",
		Run:    run(listOK),
	},
	{
		Name:   "list/items-schema",
		Source: srcList + "; inventory/openapi.yaml InventoryItem",
		Rule:   "Every listed item has exactly the members petId (int64), quantity (0..2147483647) and status (available, pending or sold).",
		Run:    run(listItemsSchema),
	},
	{
		Name:   "list/sorted",
		Source: srcList,
		Rule:   "The array is ordered by ascending petId, with one entry per pet.",
		Run:    run(listSorted),
	},
	{
		Name:   "list/query-ignored",
		Source: srcList,
		Rule:   "Query parameters are ignored: GET /inventory?… answers what GET /inventory answers (both the default list, no Cache-Control).",
		Run:    run(listQueryIgnored),
	},
}

// listOK judges list/ok.
func listOK(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
	const expected = "200 with a JSON array of InventoryItem"
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return
	}
	v, err := wire.DecodeJSON(ex.Resp.Body)
	if err == nil {
		err = wire.ValidateItemList(v, false)
	}
	if err != nil {
		c.Failf(ex, expected, "%v", err)
	}
}

// listItemsSchema judges list/items-schema.
func listItemsSchema(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
	const expected = "every item exactly {petId, quantity, status} with valid values"
	if !c.expectStatus(ex, http.StatusOK, "200") {
		return
	}
	v, err := wire.DecodeJSON(ex.Resp.Body)
	if err != nil {
		c.Fatalf(ex, expected, "%v", err)
	}
	arr, ok := v.([]any)
	if !ok {
		c.Fatalf(ex, expected, "the body is %s, not an array", wire.Describe(v))
	}
	bad := 0
	for i, it := range arr {
		if err := wire.ValidateItem(it, true); err != nil {
			if bad++; bad <= 5 {
				c.Failf(ex, expected, "item %d: %v", i, err)
			}
		}
	}
	if bad > 5 {
		c.Failf(ex, expected, "%d items in all are invalid", bad)
	}
}

// listSorted judges list/sorted.
func listSorted(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
	if !c.expectStatus(ex, http.StatusOK, "200") {
		return
	}
	items, err := wire.ParseItems(ex.Resp)
	if err != nil {
		c.Fatalf(ex, "200 with an array of items", "%v", err)
	}
	for i := 1; i < len(items); i++ {
		if items[i].ID <= items[i-1].ID {
			c.Fatalf(ex, "petIds strictly ascending", "item %d (petId %d) follows petId %d", i, items[i].ID, items[i-1].ID)
		}
	}
}

// listQueryIgnored judges list/query-ignored.
func listQueryIgnored(c checker) {
	// Default lists all: under a staleness bound a strict
	// list may be newer than both.
	plain := wire.Request{Method: http.MethodGet, Path: "/inventory"}
	before, _, err := c.ListWith(plain)
	if err != nil {
		c.Skipf("cannot read the inventory: %v (see list/ok)", err)
	}
	q := "/inventory?limit=1&offset=1&page=2&sort=desc&order=desc&status=sold&petId=1&quantity=0"
	ex := c.Do(wire.Request{Method: http.MethodGet, Path: q})
	const expected = "200 with the same array as without the query"
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return
	}
	got, err := wire.ParseItems(ex.Resp)
	if err != nil {
		c.Fatalf(ex, expected, "%v", err)
	}
	if slices.Equal(got, before) {
		return
	}
	// Another client may have written in between: compare
	// with a second plain read too.
	after, _, err := c.ListWith(plain)
	if err == nil && slices.Equal(got, after) {
		return
	}
	c.Failf(ex, expected, "the answer differs from GET /inventory's (%s)", diffItems(before, got))
}

// diffItems describes how two listings differ, briefly.
func diffItems(want, got []wire.Item) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d items instead of %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("item %d is %s instead of %s", i, showItem(got[i]), showItem(want[i]))
		}
	}
	return "no difference"
}

// showItem shows an item as a failure has always shown it.
func showItem(it wire.Item) string {
	return fmt.Sprintf("{id:%d qty:%d status:%s}", it.ID, it.Qty, it.Status)
}
