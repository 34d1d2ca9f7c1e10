package conformancetest

import (
	"fmt"
	"net/http"
	"slices"
)

const (
	srcList = "CONTRACT.md §List inventory"
)

func listChecks() []*check {
	return []*check{
		{
			name: "list/ok", spec: true,
			source: "spec §4.1; " + srcList,
			rule:   "GET /inventory answers 200 with a JSON array of InventoryItem: [] when the inventory is empty, never null.",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodGet, path: "/inventory"})
				const expected = "200 with a JSON array of InventoryItem"
				if !c.expectStatus(ex, http.StatusOK, expected) {
					return
				}
				v, err := decodeJSON(ex.resp.body)
				if err == nil {
					err = validateItemList(v, false)
				}
				if err != nil {
					c.failf(ex, expected, "%v", err)
				}
			},
		},
		{
			name:   "list/items-schema",
			source: srcList + "; inventory/openapi.yaml InventoryItem",
			rule:   "Every listed item has exactly the members petId (int64), quantity (0..2147483647) and status (available, pending or sold).",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodGet, path: "/inventory"})
				const expected = "every item exactly {petId, quantity, status} with valid values"
				if !c.expectStatus(ex, http.StatusOK, "200") {
					return
				}
				v, err := decodeJSON(ex.resp.body)
				if err != nil {
					c.fatalf(ex, expected, "%v", err)
				}
				arr, ok := v.([]any)
				if !ok {
					c.fatalf(ex, expected, "the body is %s, not an array", describe(v))
				}
				bad := 0
				for i, it := range arr {
					if err := validateItem(it, true); err != nil {
						if bad++; bad <= 5 {
							c.failf(ex, expected, "item %d: %v", i, err)
						}
					}
				}
				if bad > 5 {
					c.failf(ex, expected, "%d items in all are invalid", bad)
				}
			},
		},
		{
			name:   "list/sorted",
			source: srcList,
			rule:   "The array is ordered by ascending petId, with one entry per pet.",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodGet, path: "/inventory"})
				if !c.expectStatus(ex, http.StatusOK, "200") {
					return
				}
				items, err := parseItems(ex.resp)
				if err != nil {
					c.fatalf(ex, "200 with an array of items", "%v", err)
				}
				for i := 1; i < len(items); i++ {
					if items[i].id <= items[i-1].id {
						c.fatalf(ex, "petIds strictly ascending", "item %d (petId %d) follows petId %d", i, items[i].id, items[i-1].id)
					}
				}
			},
		},
		{
			name:   "list/query-ignored",
			source: srcList,
			rule:   "Query parameters are ignored: GET /inventory?… answers what GET /inventory answers (both the default list, no Cache-Control).",
			run: func(c *checker) {
				// Default lists all: under a staleness bound a strict
				// list may be newer than both.
				plain := request{method: http.MethodGet, path: "/inventory"}
				before, _, err := c.listWith(plain)
				if err != nil {
					c.skipf("cannot read the inventory: %v (see list/ok)", err)
				}
				q := "/inventory?limit=1&offset=1&page=2&sort=desc&order=desc&status=sold&petId=1&quantity=0"
				ex := c.do(request{method: http.MethodGet, path: q})
				const expected = "200 with the same array as without the query"
				if !c.expectStatus(ex, http.StatusOK, expected) {
					return
				}
				got, err := parseItems(ex.resp)
				if err != nil {
					c.fatalf(ex, expected, "%v", err)
				}
				if slices.Equal(got, before) {
					return
				}
				// Another client may have written in between: compare
				// with a second plain read too.
				after, _, err := c.listWith(plain)
				if err == nil && slices.Equal(got, after) {
					return
				}
				c.failf(ex, expected, "the answer differs from GET /inventory's (%s)", diffItems(before, got))
			},
		},
	}
}

// diffItems describes how two listings differ, briefly.
func diffItems(want, got []item) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d items instead of %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("item %d is %+v instead of %+v", i, got[i], want[i])
		}
	}
	return "no difference"
}
