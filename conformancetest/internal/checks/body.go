package checks

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcBody = "CONTRACT.md §Update stock level › Body"

// Body are the checks of the update's body: what is not an update gets
// 400 with the code of its fault, and the forms of a quantity accepted.
var Body = []*suite.Check{
	{
		Name: "body/empty", Source: srcBody,
		Rule: "An empty body, or one of whitespace only, is 400 invalid_json.",
		Run:  run(rejected("invalid_json", "", " \r\n\t ")),
	},
	{
		Name: "body/invalid-json", Source: srcBody,
		Rule: "A body that is not valid JSON is 400 invalid_json.",
		Run: run(rejected("invalid_json",
			`{"quantity":`, `{quantity:1}`, `{'quantity':1}`, `{"quantity":01}`, `{"quantity":1,}`, `{"quantity":+1}`, `{"quantity":NaN}`, `{"quantity":1`)),
	},
	{
		Name: "body/invalid-utf8", Source: srcBody,
		Rule: "A body that is not valid UTF-8 is 400 invalid_json.",
		Run:  run(rejected("invalid_json", "{\"quantity\":1,\"n\xffe\":2}", "{\"quantity\":\"\xc3\x28\"}")),
	},
	{
		Name: "body/not-an-object", Source: srcBody,
		Rule: "A body that is a JSON array, string, number, boolean or null is 400 invalid_json.",
		Run:  run(rejected("invalid_json", `[{"quantity":1}]`, `"quantity"`, `null`, `5`, `true`)),
	},
	{
		Name: "body/trailing-data", Source: srcBody,
		Rule: "Data after the object is 400 invalid_json.",
		Run:  run(rejected("invalid_json", `{"quantity":1}{"quantity":2}`, `{"quantity":1} x`, `{"quantity":1}]`, `{"quantity":1} null`)),
	},
	{
		Name: "body/duplicate-member", Source: srcBody,
		Rule: `A member name twice, in any object of the body and compared after unescaping ("quantit\u0079"), is 400 invalid_json.`,
		Run:  run(rejected("invalid_json", `{"quantity":1,"quantity":2}`, `{"quantity":1,"quantit\u0079":2}`, `{"quantity":1,"x":{"a":1,"a":2}}`)),
	},
	{
		Name: "body/unknown-member", Source: srcBody,
		Rule: "A member other than quantity (status, petId, …) is 400 unknown_field: an update cannot change status.",
		Run:  run(rejected("unknown_field", `{"quantity":1,"status":"sold"}`, `{"quantity":1,"petId":2}`, `{"status":"sold"}`, `{"quantity":1,"":0}`)),
	},
	{
		Name: "body/member-name-exact", Source: srcBody,
		Rule: "Member names match exactly: Quantity, QUANTITY and \"quantity \" are unknown members, 400 unknown_field.",
		Run:  run(rejected("unknown_field", `{"Quantity":1}`, `{"QUANTITY":1}`, `{"quantity ":1}`)),
	},
	{
		Name: "body/missing-quantity", Spec: true, Source: "spec §4.2 rule 1; " + srcBody,
		Rule: "A body without quantity is 400 missing_field.",
		Run:  run(rejected("missing_field", `{}`, ` { } `)),
	},
	{
		Name: "body/quantity-not-integer", Spec: true, Source: "spec §4.2 rule 2; " + srcBody,
		Rule: `A quantity that is not an integer ("5", 5.5, true, null, [], {}) is 400 invalid_field.`,
		Run: run(rejected("invalid_field",
			`{"quantity":"5"}`, `{"quantity":5.5}`, `{"quantity":true}`, `{"quantity":null}`, `{"quantity":[]}`, `{"quantity":{}}`, `{"quantity":[5]}`, `{"quantity":"five"}`)),
	},
	{
		Name: "body/quantity-out-of-range", Source: srcBody,
		Rule: "A quantity below 0 or above 2147483647 (-1, 2147483648, 1e400, 2147483647.0000001) is 400 invalid_field.",
		Run: run(rejected("invalid_field",
			`{"quantity":-1}`, `{"quantity":2147483648}`, `{"quantity":1e400}`, `{"quantity":2147483647.0000001}`, `{"quantity":1e10}`, `{"quantity":-0.5}`, `{"quantity":9223372036854775808}`)),
	},
	{
		Name: "body/whole-number-forms", Writes: true,
		Source: srcBody + " (JSON Schema integer)",
		Rule:   "A number with a whole value is an integer: 17.0, 17e0, 1.7e1, 170E-1 set quantity 17, and -0 sets 0.",
		Run:    run(bodyWholeNumberForms),
	},
	{
		Name: "body/quantity-bounds", Writes: true,
		Source: srcBody,
		Rule:   "The bounds are accepted: quantity 0 and 2147483647.",
		Run:    run(bodyQuantityBounds),
	},
}

// bodyWholeNumberForms judges body/whole-number-forms.
func bodyWholeNumberForms(c checker) {
	pet := c.AnyPet()
	c.Touch(pet.ID)
	q := newQuantity(0, pet.Qty)
	s := strconv.FormatInt(q, 10)
	forms := []string{s + ".0", s + "e0", fmt.Sprintf("%s.%se%d", s[:1], s[1:], len(s)-1), s + "0E-1", s + ".000"}
	for _, f := range forms {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: []byte(`{"quantity":` + f + `}`)})
		c.expectItem(ex, pet.ID, q, pet.Status)
	}
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: []byte(`{"quantity":-0}`)})
	c.expectItem(ex, pet.ID, 0, pet.Status)
}

// bodyQuantityBounds judges body/quantity-bounds.
func bodyQuantityBounds(c checker) {
	pet := c.AnyPet()
	c.Touch(pet.ID)
	for _, q := range []int64{0, 2147483647} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: wire.QtyBody(q)})
		c.expectItem(ex, pet.ID, q, pet.Status)
	}
}

// rejected judges a body/ check of bodies that are no update: each of
// bodies, sent to the check's target (Checker.Target), is answered 400
// with code.
func rejected(code string, bodies ...string) func(c checker) {
	return func(c checker) {
		p := c.Target()
		for _, b := range bodies {
			ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: []byte(b)})
			c.expectError(ex, http.StatusBadRequest, code)
		}
	}
}
