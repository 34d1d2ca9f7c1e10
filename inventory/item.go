package inventory

import "strconv"

// MaxQuantity is the largest stock count the API accepts (the int32 maximum,
// so that every backend and every client language can hold it).
const MaxQuantity = 2147483647

// Status is the status of the pet an inventory entry tracks.
type Status string

// The statuses of the spec's PetStatus enumeration.
const (
	StatusAvailable Status = "available"
	StatusPending   Status = "pending"
	StatusSold      Status = "sold"
)

// Valid reports whether s is one of the three statuses of the spec.
func (s Status) Valid() bool {
	switch s {
	case StatusAvailable, StatusPending, StatusSold:
		return true
	}
	return false
}

// Item is one inventory entry: the spec's InventoryItem.
type Item struct {
	PetID    int64  `json:"petId"`
	Quantity int    `json:"quantity"`
	Status   Status `json:"status"`
}

// Validate reports why it is not an entry the store may hold, as an *Error
// with code invalid_field, or nil when it is one.
func (it Item) Validate() error {
	if it.Quantity < 0 || it.Quantity > MaxQuantity {
		return newError(CodeInvalidField, "item %d: quantity %d is outside 0..%d", it.PetID, it.Quantity, MaxQuantity)
	}
	if !it.Status.Valid() {
		return newError(CodeInvalidField, "item %d: status %q is not one of available, pending, sold", it.PetID, string(it.Status))
	}
	return nil
}

// appendJSON appends the JSON encoding of it to b, without reflection or
// allocation: the list and update responses are built with it. For a valid
// item it writes the same bytes as encoding/json; for a status outside the
// enumeration, JSON with the same meaning (encoding/json also escapes <, >
// and &, which this does not need to).
func (it Item) appendJSON(b []byte) []byte {
	b = append(b, `{"petId":`...)
	b = strconv.AppendInt(b, it.PetID, 10)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, int64(it.Quantity), 10)
	b = append(b, `,"status":`...)
	if it.Status.Valid() {
		// The three valid statuses need no escaping.
		b = append(b, '"')
		b = append(b, it.Status...)
		b = append(b, '"')
	} else {
		b = appendJSONString(b, string(it.Status))
	}
	return append(b, '}')
}
