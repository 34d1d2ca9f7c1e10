package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/petinventory/petinventory/inventory"
)

// The values of Config.Seed (-seed) that name no file.
const (
	// SeedDemo initializes the store with the demo inventory (DemoInventory).
	SeedDemo = "demo"
	// SeedEmpty initializes the store with no pets: an inventory that
	// starts empty.
	SeedEmpty = "empty"
)

// DemoInventory returns the demo inventory, which an empty store is seeded
// with unless Config.SeedFile names another: 12 pets covering the three
// statuses.
func DemoInventory() []inventory.Item {
	return []inventory.Item{
		{PetID: 1, Quantity: 12, Status: inventory.StatusAvailable},
		{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
		{PetID: 3, Quantity: 4, Status: inventory.StatusPending},
		{PetID: 4, Quantity: 7, Status: inventory.StatusAvailable},
		{PetID: 5, Quantity: 1, Status: inventory.StatusPending},
		{PetID: 6, Quantity: 0, Status: inventory.StatusSold},
		{PetID: 7, Quantity: 25, Status: inventory.StatusAvailable},
		{PetID: 8, Quantity: 3, Status: inventory.StatusAvailable},
		{PetID: 9, Quantity: 2, Status: inventory.StatusPending},
		{PetID: 10, Quantity: 0, Status: inventory.StatusSold},
		{PetID: 11, Quantity: 9, Status: inventory.StatusAvailable},
		{PetID: 12, Quantity: 5, Status: inventory.StatusPending},
	}
}

// LoadSeed reads a JSON array of inventory items from path. Unknown
// members are an error (a typo must not silently drop a field), and each
// item is checked as inventory.ValidateItems checks a seed (the rule
// seeding through the Service applies), so that a bad file stops the
// server before it listens rather than failing the seed in the
// background. An error names the element's position in the array and,
// once it is read, its pet id.
func LoadSeed(path string) ([]inventory.Item, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seed file: %w", err)
	}
	const want = `want a JSON array of {"petId","quantity","status"}`
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("seed file %s: %s; it does not start with [", path, want)
	}
	items := []inventory.Item{}
	first := map[int64]int{} // pet id → position of its first element
	for n := 1; dec.More(); n++ {
		var it inventory.Item
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("seed file %s: element %d of the array: %w (%s)", path, n, err, want)
		}
		if err := it.Validate(); err != nil {
			var ie *inventory.Error
			msg := err.Error()
			if errors.As(err, &ie) {
				msg = strings.TrimPrefix(ie.Message(), fmt.Sprintf("item %d: ", it.PetID))
			}
			return nil, fmt.Errorf("seed file %s: element %d of the array (pet id %d): %s", path, n, it.PetID, msg)
		}
		if m, dup := first[it.PetID]; dup {
			return nil, fmt.Errorf("seed file %s: element %d of the array (pet id %d) repeats the pet id of element %d", path, n, it.PetID, m)
		}
		first[it.PetID] = n
		items = append(items, it)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("seed file %s: %s: %w", path, want, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("seed file %s: data after the JSON array", path)
	}
	// The same rule as a seed through the Service, in case it grows.
	if err := inventory.ValidateItems(items...); err != nil {
		return nil, fmt.Errorf("seed file %s: %w", path, err)
	}
	return items, nil
}
