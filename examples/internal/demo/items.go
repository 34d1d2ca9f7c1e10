package demo

import (
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/server"
)

// Items returns the demo inventory the server seeds an empty store with
// (server.DemoInventory), so that every example serves the same pets.
func Items() []inventory.Item { return server.DemoInventory() }
