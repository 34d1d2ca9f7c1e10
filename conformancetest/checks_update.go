package conformancetest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

const (
	srcPetID   = "CONTRACT.md §Update stock level › petId"
	srcMedia   = "CONTRACT.md §Update stock level › Media type"
	srcSize    = "CONTRACT.md §Update stock level › Body size"
	srcBody    = "CONTRACT.md §Update stock level › Body"
	srcSuccess = "CONTRACT.md §Update stock level › Success"
)

func petIDChecks() []*check {
	return []*check{
		{
			name: "petid/unknown", spec: true,
			source: "spec §4.2 rule 3; " + srcPetID,
			rule:   "A valid petId with no inventory entry is 404 not_found, and the update creates nothing.",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodPatch, path: itemPath(c.unlistedID()), contentType: "application/json", body: qtyBody(1)})
				c.expectError(ex, http.StatusNotFound, "not_found")
			},
		},
		{
			name:   "petid/not-an-integer",
			source: srcPetID,
			rule:   "A petId that is not a base-10 integer (abc, 1.5, 1e3, -x, 0x1A, 1_000, a space, 12abc, a non-ASCII digit) is 400 invalid_pet_id.",
			run: func(c *checker) {
				for _, id := range []string{"abc", "1.5", "1e3", "-x", "0x1A", "1_000", "%201", "12abc", "%D9%A1", "--1"} {
					ex := c.do(request{method: http.MethodPatch, path: "/inventory/" + id, contentType: "application/json", body: qtyBody(1)})
					c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
				}
			},
		},
		{
			name:   "petid/out-of-range",
			source: srcPetID,
			rule:   "A petId outside the signed 64-bit range (9223372036854775808, -9223372036854775809) is 400 invalid_pet_id.",
			run: func(c *checker) {
				for _, id := range []string{"9223372036854775808", "-9223372036854775809", "99999999999999999999"} {
					ex := c.do(request{method: http.MethodPatch, path: "/inventory/" + id, contentType: "application/json", body: qtyBody(1)})
					c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
				}
			},
		},
		{
			name:   "petid/empty",
			source: srcPetID + "; " + srcRoutes + " (decision: trailing slash)",
			rule:   "An empty petId (PATCH {base}/inventory/) is 400 invalid_pet_id.",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodPatch, path: "/inventory/", contentType: "application/json", body: qtyBody(1)})
				c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
			},
		},
		{
			name: "petid/sign-and-leading-zeros", writes: true,
			source: srcPetID + " (decision: strconv.ParseInt)",
			rule:   "A petId is read as strconv.ParseInt reads it: a leading + and leading zeros name the same pet (+7 and 007 are pet 7).",
			run: func(c *checker) {
				var pet *item
				for _, it := range c.pets() {
					if it.id >= 0 {
						pet = &it
						break
					}
				}
				if pet == nil {
					c.skipf("no listed pet has a non-negative petId")
				}
				c.touch(pet.id)
				digits := strconv.FormatInt(pet.id, 10)
				for i, p := range []string{"0" + digits, "+" + digits, "+00" + digits} {
					q := newQuantity(i, pet.qty)
					ex := c.do(request{method: http.MethodPatch, path: "/inventory/" + p, contentType: "application/json", body: qtyBody(q)})
					c.expectItem(ex, pet.id, q, pet.status)
				}
			},
		},
	}
}

func mediaChecks() []*check {
	accepted := func(name, rule string, types ...string) *check {
		return &check{
			name: name, writes: true, source: srcMedia, rule: rule,
			run: func(c *checker) {
				pet := c.anyPet()
				c.touch(pet.id)
				for i, ct := range types {
					q := newQuantity(i, pet.qty)
					ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: ct, body: qtyBody(q)})
					c.expectItem(ex, pet.id, q, pet.status)
				}
			},
		}
	}
	return []*check{
		accepted("media/absent", "A request with no Content-Type is read as JSON.", ""),
		accepted("media/json-with-charset", "application/json with a charset=utf-8 parameter (any case) is accepted.",
			"application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"),
		accepted("media/merge-patch", "application/merge-patch+json is accepted.",
			"application/merge-patch+json", "application/merge-patch+json; charset=utf-8"),
		{
			name:   "media/unsupported",
			source: srcMedia,
			rule:   "Any other media type (text/plain, application/xml, a form, JSON Patch, a charset other than UTF-8) is 415 unsupported_media_type.",
			run: func(c *checker) {
				p := c.target()
				for _, ct := range []string{
					"text/plain", "application/xml", "application/x-www-form-urlencoded",
					"multipart/form-data; boundary=x", "application/json-patch+json",
					"application/json; charset=iso-8859-1",
				} {
					ex := c.do(request{method: http.MethodPatch, path: p, contentType: ct, body: qtyBody(1)})
					c.expectError(ex, http.StatusUnsupportedMediaType, "unsupported_media_type")
				}
			},
		},
		{
			name:   "media/checked-before-body",
			source: srcMedia + "; " + srcOrder,
			rule:   "The media type is checked before the body: text/plain with invalid JSON, or with an empty body, is 415.",
			run: func(c *checker) {
				p := c.target()
				for _, b := range [][]byte{[]byte("not json"), {}} {
					ex := c.do(request{method: http.MethodPatch, path: p, contentType: "text/plain", body: b})
					c.expectError(ex, http.StatusUnsupportedMediaType, "unsupported_media_type")
				}
			},
		},
	}
}

func sizeChecks() []*check {
	return []*check{
		{
			name:   "size/over-limit",
			source: srcSize,
			rule:   "A body over the limit (default 16 KiB), with Content-Length, is 413 payload_too_large.",
			run: func(c *checker) {
				p := c.target()
				for _, n := range []int64{c.rn.cfg.MaxBodyBytes + 1, 4 * c.rn.cfg.MaxBodyBytes} {
					ex := c.do(request{method: http.MethodPatch, path: p, contentType: "application/json", body: paddedBody(n, 1)})
					c.expectError(ex, http.StatusRequestEntityTooLarge, "payload_too_large")
				}
			},
		},
		{
			name:   "size/over-limit-chunked",
			source: srcSize,
			rule:   "A body over the limit sent without Content-Length (chunked) is 413 payload_too_large too.",
			run: func(c *checker) {
				p := c.target()
				for _, n := range []int64{c.rn.cfg.MaxBodyBytes + 1, 4 * c.rn.cfg.MaxBodyBytes} {
					ex := c.do(request{method: http.MethodPatch, path: p, contentType: "application/json", body: paddedBody(n, 1), chunked: true})
					c.expectError(ex, http.StatusRequestEntityTooLarge, "payload_too_large")
				}
			},
		},
		{
			name:   "size/at-limit-accepted",
			source: srcSize,
			rule:   "A body exactly at the limit, or just under it, is not 413: it is read (here: 404 for a pet that does not exist), with or without Content-Length.",
			run: func(c *checker) {
				p := itemPath(c.unlistedID())
				for _, n := range []int64{c.rn.cfg.MaxBodyBytes, c.rn.cfg.MaxBodyBytes - 1} {
					for _, chunked := range []bool{false, true} {
						ex := c.do(request{method: http.MethodPatch, path: p, contentType: "application/json", body: paddedBody(n, 1), chunked: chunked})
						c.expectError(ex, http.StatusNotFound, "not_found")
					}
				}
			},
		},
	}
}

func bodyChecks() []*check {
	rejected := func(name, source, rule, code string, spec bool, bodies ...string) *check {
		return &check{
			name: name, spec: spec, source: source, rule: rule,
			run: func(c *checker) {
				p := c.target()
				for _, b := range bodies {
					ex := c.do(request{method: http.MethodPatch, path: p, contentType: "application/json", body: []byte(b)})
					c.expectError(ex, http.StatusBadRequest, code)
				}
			},
		}
	}
	return []*check{
		rejected("body/empty", srcBody, "An empty body, or one of whitespace only, is 400 invalid_json.", "invalid_json", false,
			"", " \r\n\t "),
		rejected("body/invalid-json", srcBody, "A body that is not valid JSON is 400 invalid_json.", "invalid_json", false,
			`{"quantity":`, `{quantity:1}`, `{'quantity':1}`, `{"quantity":01}`, `{"quantity":1,}`, `{"quantity":+1}`, `{"quantity":NaN}`, `{"quantity":1`),
		rejected("body/invalid-utf8", srcBody, "A body that is not valid UTF-8 is 400 invalid_json.", "invalid_json", false,
			"{\"quantity\":1,\"n\xffe\":2}", "{\"quantity\":\"\xc3\x28\"}"),
		rejected("body/not-an-object", srcBody, "A body that is a JSON array, string, number, boolean or null is 400 invalid_json.", "invalid_json", false,
			`[{"quantity":1}]`, `"quantity"`, `null`, `5`, `true`),
		rejected("body/trailing-data", srcBody, "Data after the object is 400 invalid_json.", "invalid_json", false,
			`{"quantity":1}{"quantity":2}`, `{"quantity":1} x`, `{"quantity":1}]`, `{"quantity":1} null`),
		rejected("body/duplicate-member", srcBody, `A member name twice, in any object of the body and compared after unescaping ("quantit\u0079"), is 400 invalid_json.`, "invalid_json", false,
			`{"quantity":1,"quantity":2}`, `{"quantity":1,"quantit\u0079":2}`, `{"quantity":1,"x":{"a":1,"a":2}}`),
		rejected("body/unknown-member", srcBody, "A member other than quantity (status, petId, …) is 400 unknown_field: an update cannot change status.", "unknown_field", false,
			`{"quantity":1,"status":"sold"}`, `{"quantity":1,"petId":2}`, `{"status":"sold"}`, `{"quantity":1,"":0}`),
		rejected("body/member-name-exact", srcBody, "Member names match exactly: Quantity, QUANTITY and \"quantity \" are unknown members, 400 unknown_field.", "unknown_field", false,
			`{"Quantity":1}`, `{"QUANTITY":1}`, `{"quantity ":1}`),
		rejected("body/missing-quantity", "spec §4.2 rule 1; "+srcBody, "A body without quantity is 400 missing_field.", "missing_field", true,
			`{}`, ` { } `),
		rejected("body/quantity-not-integer", "spec §4.2 rule 2; "+srcBody, `A quantity that is not an integer ("5", 5.5, true, null, [], {}) is 400 invalid_field.`, "invalid_field", true,
			`{"quantity":"5"}`, `{"quantity":5.5}`, `{"quantity":true}`, `{"quantity":null}`, `{"quantity":[]}`, `{"quantity":{}}`, `{"quantity":[5]}`, `{"quantity":"five"}`),
		rejected("body/quantity-out-of-range", srcBody, "A quantity below 0 or above 2147483647 (-1, 2147483648, 1e400, 2147483647.0000001) is 400 invalid_field.", "invalid_field", false,
			`{"quantity":-1}`, `{"quantity":2147483648}`, `{"quantity":1e400}`, `{"quantity":2147483647.0000001}`, `{"quantity":1e10}`, `{"quantity":-0.5}`, `{"quantity":9223372036854775808}`),
		{
			name: "body/whole-number-forms", writes: true,
			source: srcBody + " (JSON Schema integer)",
			rule:   "A number with a whole value is an integer: 17.0, 17e0, 1.7e1, 170E-1 set quantity 17, and -0 sets 0.",
			run: func(c *checker) {
				pet := c.anyPet()
				c.touch(pet.id)
				q := newQuantity(0, pet.qty)
				s := strconv.FormatInt(q, 10)
				forms := []string{s + ".0", s + "e0", fmt.Sprintf("%s.%se%d", s[:1], s[1:], len(s)-1), s + "0E-1", s + ".000"}
				for _, f := range forms {
					ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: []byte(`{"quantity":` + f + `}`)})
					c.expectItem(ex, pet.id, q, pet.status)
				}
				ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: []byte(`{"quantity":-0}`)})
				c.expectItem(ex, pet.id, 0, pet.status)
			},
		},
		{
			name: "body/quantity-bounds", writes: true,
			source: srcBody,
			rule:   "The bounds are accepted: quantity 0 and 2147483647.",
			run: func(c *checker) {
				pet := c.anyPet()
				c.touch(pet.id)
				for _, q := range []int64{0, 2147483647} {
					ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: qtyBody(q)})
					c.expectItem(ex, pet.id, q, pet.status)
				}
			},
		},
	}
}

func updateChecks() []*check {
	return []*check{
		{
			name: "update/ok", spec: true, writes: true,
			source: "spec §4.2 rule 4; " + srcSuccess,
			rule:   "A valid update is 200 with the whole entry: the pet's petId, the new quantity and its unchanged status (tried on a pet of each status listed).",
			run: func(c *checker) {
				seen := map[string]bool{}
				for i, pet := range c.pets() {
					if seen[pet.status] {
						continue
					}
					seen[pet.status] = true
					c.touch(pet.id)
					q := newQuantity(i, pet.qty)
					ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: qtyBody(q)})
					c.expectItem(ex, pet.id, q, pet.status)
				}
			},
		},
		{
			name: "update/replaces", spec: true, writes: true,
			source: "spec §2 InventoryUpdate; " + srcSuccess,
			rule:   "quantity replaces the stored count, it is not added to it: two updates in a row leave the second value.",
			run: func(c *checker) {
				pet := c.anyPet()
				c.touch(pet.id)
				q1 := newQuantity(0, pet.qty)
				q2 := newQuantity(1, pet.qty, q1)
				for _, q := range []int64{q1, q2} {
					ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: qtyBody(q)})
					if !c.expectItem(ex, pet.id, q, pet.status) {
						return
					}
				}
				c.expectListed(pet.id, q2, pet.status)
			},
		},
		{
			name: "update/visible-in-list", writes: true,
			source: srcSuccess + "; " + srcList + "; CONTRACT.md §With a staleness bound",
			rule: "After an update the strict list (Cache-Control: no-cache) shows the new quantity with the same status, and the same set of pets, at once; " +
				"the default list (no Cache-Control) shows it too, once the staleness bound given with -consistency-staleness has passed (without a bound, within 10 s).",
			run: func(c *checker) {
				before := c.pets()
				pet := before[len(before)-1]
				c.touch(pet.id)
				q := newQuantity(2, pet.qty)
				ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: qtyBody(q)})
				answered := time.Now()
				if !c.expectItem(ex, pet.id, q, pet.status) {
					return
				}
				after := c.expectListed(pet.id, q, pet.status)
				if after == nil || c.failed() {
					return
				}
				if len(after) != len(before) {
					c.failf(nil, "the same pets before and after an update", "the list held %d pets before the update and %d after", len(before), len(after))
				}
				plain := c.defaultListAfter(answered, request{method: http.MethodGet, path: "/inventory"}, func(ex *exchange) bool {
					return listedWith(ex, pet.id, q)
				})
				c.expectListedIn(plain, pet.id, q, pet.status)
			},
		},
	}
}

// expectListed checks that the strict list (stateList) shows pet id with
// qty and status, and returns the list.
func (c *checker) expectListed(id, qty int64, status string) []item {
	return c.expectListedIn(c.do(stateList()), id, qty, status)
}

// expectListedIn checks that the list answer ex shows pet id with qty and
// status, and returns the list.
func (c *checker) expectListedIn(ex *exchange, id, qty int64, status string) []item {
	what := "the list"
	if !ex.req.noCache {
		what = c.defaultListWords()
	}
	expected := fmt.Sprintf("%s shows pet %d with quantity %d and status %q", what, id, qty, status)
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return nil
	}
	items, err := parseItems(ex.resp)
	if err != nil {
		c.failf(ex, expected, "%v", err)
		return nil
	}
	for _, it := range items {
		if it.id == id {
			if it.qty != qty || it.status != status {
				c.failf(ex, expected, "the list shows pet %d with quantity %d and status %q", id, it.qty, it.status)
			}
			return items
		}
	}
	c.failf(ex, expected, "pet %d is not in the list", id)
	return items
}

// listedWith reports whether ex is a 200 list that shows pet id with qty.
func listedWith(ex *exchange, id, qty int64) bool {
	if ex.err != nil {
		return false
	}
	items, err := parseItems(ex.resp)
	if err != nil {
		return false
	}
	for _, it := range items {
		if it.id == id {
			return it.qty == qty
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
func (c *checker) defaultListAfter(answered time.Time, r request, shows func(*exchange) bool) *exchange {
	if bound := c.rn.cfg.ConsistencyStaleness; bound > 0 {
		c.sleep(time.Until(answered.Add(bound)))
		return c.do(r)
	}
	for first := true; ; first = false {
		sent := time.Now()
		ex := c.do(r)
		if shows(ex) {
			if !first {
				c.mu.Lock()
				c.res.Detail = fmt.Sprintf("the default list (no Cache-Control) showed the update in a list sent %s after its answer: the deployment's lists have a staleness bound? "+
					"Give it with -consistency-staleness (Config.ConsistencyStaleness) to hold them to it", sent.Sub(answered).Round(time.Millisecond))
				c.mu.Unlock()
			}
			return ex
		}
		if time.Since(answered) > maxUndeclaredStaleness {
			return ex
		}
		c.sleep(defaultListPoll)
	}
}

// defaultListWords names a default list sent after an update, for a
// failure's expected.
func (c *checker) defaultListWords() string {
	if bound := c.rn.cfg.ConsistencyStaleness; bound > 0 {
		return fmt.Sprintf("the default list (no Cache-Control), sent the staleness bound of %v after the update's answer,", bound)
	}
	return "the default list (no Cache-Control)"
}

// failed reports whether the check has recorded a failure.
func (c *checker) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.res.Failures) > 0
}

// sleep waits d, and stops the check when the run is interrupted.
func (c *checker) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
		panic(abort{})
	}
}
