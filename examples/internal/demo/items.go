package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/petinventory/petinventory/inventory"
)

// Items returns the demo inventory: 12 pets covering the three statuses.
func Items() []inventory.Item {
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
// members are an error (a typo must not silently drop a field), and the
// items are checked with inventory.ValidateItems, the rule seeding through
// the Service applies, so that a bad file stops the server before it
// listens rather than failing the seed in the background.
func LoadSeed(path string) ([]inventory.Item, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seed file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var items []inventory.Item
	if err := dec.Decode(&items); err != nil {
		return nil, fmt.Errorf("seed file %s: want a JSON array of {\"petId\",\"quantity\",\"status\"}: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("seed file %s: data after the JSON array", path)
	}
	if err := inventory.ValidateItems(items...); err != nil {
		return nil, fmt.Errorf("seed file %s: %w", path, err)
	}
	return items, nil
}
