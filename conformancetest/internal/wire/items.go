package wire

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// Item is an inventory entry as the list answered it.
type Item struct {
	ID     int64
	Qty    int64
	Status string
}

// ParseItems reads a list answer leniently (the list checks judge its
// form; here it is only read): a 200 with an array of objects that have
// an integer petId and quantity and a string status.
func ParseItems(resp *Response) ([]Item, error) {
	if resp.Status != http.StatusOK {
		return nil, fmt.Errorf("GET /inventory answered %d, not 200", resp.Status)
	}
	if resp.Truncated {
		return nil, fmt.Errorf("GET /inventory answered a list of over %d bytes, more than the suite reads of an answer", MaxResponseBytes)
	}
	v, err := DecodeJSON(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET /inventory: %v", err)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("GET /inventory answered %s, not an array", Describe(v))
	}
	items := make([]Item, 0, len(arr))
	for i, e := range arr {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("GET /inventory: item %d is not an object", i)
		}
		id, ok1 := IntegerValue(obj["petId"])
		q, ok2 := IntegerValue(obj["quantity"])
		st, ok3 := obj["status"].(string)
		if !ok1 || !ok2 || !ok3 || !id.IsInt64() || !q.IsInt64() {
			return nil, fmt.Errorf("GET /inventory: item %d lacks an integer petId, an integer quantity or a string status", i)
		}
		items = append(items, Item{ID: id.Int64(), Qty: q.Int64(), Status: st})
	}
	return items, nil
}

// Unlisted returns a valid petId that items do not hold: it prefers the
// largest int64, which also probes the top of the range.
func Unlisted(items []Item) int64 {
	ids := map[int64]bool{}
	for _, it := range items {
		ids[it.ID] = true
	}
	id := int64(math.MaxInt64)
	for ids[id] {
		id--
	}
	return id
}

// ItemPath is the path of pet id's route.
func ItemPath(id int64) string { return "/inventory/" + strconv.FormatInt(id, 10) }

// QtyBody is the update body that sets quantity q.
func QtyBody(q int64) []byte { return []byte(fmt.Sprintf(`{"quantity":%d}`, q)) }
