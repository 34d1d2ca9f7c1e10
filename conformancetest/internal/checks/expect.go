package checks

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// newQuantity returns a quantity different from each of avoid, from a
// small range that any implementation accepts; k varies it.
func newQuantity(k int, avoid ...int64) int64 {
	for q := int64(17 + 13*k); ; q++ {
		if !slices.Contains(avoid, q) {
			return q
		}
	}
}

// expectStatus fails when ex's status is not want.
func (c checker) expectStatus(ex *wire.Exchange, want int, expected string) bool {
	if ex.Resp.Status != want {
		c.Failf(ex, expected, "answered %s, not %d", wire.ErrorSummary(ex.Resp), want)
		return false
	}
	return true
}

// expectError checks an error answer: the status, an Error body whose
// status repeats it, and, at LevelContract, exactly the three members, a
// non-empty message and the code.
func (c checker) expectError(ex *wire.Exchange, status int, code string) bool {
	expected := fmt.Sprintf("%d with an Error body", status)
	if c.Contract() {
		expected = fmt.Sprintf("%d with an Error body, code %q", status, code)
	}
	if !c.expectStatus(ex, status, expected) {
		return false
	}
	if ex.Req.Method == http.MethodHead {
		return true
	}
	v, err := wire.DecodeJSON(ex.Resp.Body)
	if err == nil {
		err = wire.ValidateError(v, status, c.Contract())
	}
	if err != nil {
		c.Failf(ex, expected, "the body is not a valid Error: %v", err)
		return false
	}
	if got := v.(map[string]any)["code"].(string); c.Contract() && got != code {
		c.Failf(ex, expected, "code %q, not %q", got, code)
		return false
	}
	return true
}

// expectItem checks a successful update's answer: 200 and the whole
// entry, with the given values.
func (c checker) expectItem(ex *wire.Exchange, id, qty int64, status string) bool {
	expected := fmt.Sprintf(`200 with {"petId":%d,"quantity":%d,"status":%q}`, id, qty, status)
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return false
	}
	v, err := wire.DecodeJSON(ex.Resp.Body)
	if err == nil {
		err = wire.ValidateItem(v, c.Contract())
	}
	if err != nil {
		c.Failf(ex, expected, "the body is not a valid InventoryItem: %v", err)
		return false
	}
	obj := v.(map[string]any)
	gotID, _ := wire.IntegerValue(obj["petId"])
	gotQ, _ := wire.IntegerValue(obj["quantity"])
	ok := true
	if !gotID.IsInt64() || gotID.Int64() != id {
		c.Failf(ex, expected, "petId %s, not %d", gotID, id)
		ok = false
	}
	if !gotQ.IsInt64() || gotQ.Int64() != qty {
		c.Failf(ex, expected, "quantity %s, not %d (the update sets the new count)", gotQ, qty)
		ok = false
	}
	if s := obj["status"].(string); s != status {
		c.Failf(ex, expected, "status %q, not %q (an update leaves status unchanged)", s, status)
		ok = false
	}
	return ok
}
