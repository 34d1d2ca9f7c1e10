package checks

import (
	"net/http"
	"strconv"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcPetID = "CONTRACT.md §Update stock level › petId"

// PetID are the checks of the update's petId: how it is read, and what
// one that is not a pet gets.
var PetID = []*suite.Check{
	{
		Name: "petid/unknown", Spec: true,
		Source: "spec §4.2 rule 3; " + srcPetID,
		Rule:   "A valid petId with no inventory entry is 404 not_found, and the update creates nothing.",
		Run:    run(petIDUnknown),
	},
	{
		Name:   "petid/not-an-integer",
		Source: srcPetID,
		Rule:   "A petId that is not a base-10 integer (abc, 1.5, 1e3, -x, 0x1A, 1_000, a space, 12abc, a non-ASCII digit) is 400 invalid_pet_id.",
		Run:    run(petIDNotAnInteger),
	},
	{
		Name:   "petid/out-of-range",
		Source: srcPetID,
		Rule:   "A petId outside the signed 64-bit range (9223372036854775808, -9223372036854775809) is 400 invalid_pet_id.",
		Run:    run(petIDOutOfRange),
	},
	{
		Name:   "petid/empty",
		Source: srcPetID + "; " + srcRoutes + " (decision: trailing slash)",
		Rule:   "An empty petId (PATCH {base}/inventory/) is 400 invalid_pet_id.",
		Run:    run(petIDEmpty),
	},
	{
		Name: "petid/sign-and-leading-zeros", Writes: true,
		Source: srcPetID + " (decision: strconv.ParseInt)",
		Rule:   "A petId is read as strconv.ParseInt reads it: a leading + and leading zeros name the same pet (+7 and 007 are pet 7).",
		Run:    run(petIDSignAndLeadingZeros),
	},
}

// petIDUnknown judges petid/unknown.
func petIDUnknown(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(c.UnlistedID()), ContentType: "application/json", Body: wire.QtyBody(1)})
	c.expectError(ex, http.StatusNotFound, "not_found")
}

// petIDNotAnInteger judges petid/not-an-integer.
func petIDNotAnInteger(c checker) {
	for _, id := range []string{"abc", "1.5", "1e3", "-x", "0x1A", "1_000", "%201", "12abc", "%D9%A1", "--1"} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: "/inventory/" + id, ContentType: "application/json", Body: wire.QtyBody(1)})
		c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
	}
}

// petIDOutOfRange judges petid/out-of-range.
func petIDOutOfRange(c checker) {
	for _, id := range []string{"9223372036854775808", "-9223372036854775809", "99999999999999999999"} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: "/inventory/" + id, ContentType: "application/json", Body: wire.QtyBody(1)})
		c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
	}
}

// petIDEmpty judges petid/empty.
func petIDEmpty(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: "/inventory/", ContentType: "application/json", Body: wire.QtyBody(1)})
	c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
}

// petIDSignAndLeadingZeros judges petid/sign-and-leading-zeros.
func petIDSignAndLeadingZeros(c checker) {
	var pet *wire.Item
	for _, it := range c.Pets() {
		if it.ID >= 0 {
			pet = &it
			break
		}
	}
	if pet == nil {
		c.Skipf("no listed pet has a non-negative petId")
	}
	c.Touch(pet.ID)
	digits := strconv.FormatInt(pet.ID, 10)
	for i, p := range []string{"0" + digits, "+" + digits, "+00" + digits} {
		q := newQuantity(i, pet.Qty)
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: "/inventory/" + p, ContentType: "application/json", Body: wire.QtyBody(q)})
		c.expectItem(ex, pet.ID, q, pet.Status)
	}
}
