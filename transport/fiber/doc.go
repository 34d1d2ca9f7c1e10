// Package inventoryfiber mounts the petinventory API on a Fiber (v2) router.
//
// It is an adapter and nothing more: it copies each request into an
// inventory.Request, calls inventory.API.Serve, and copies the answer back.
// Every rule of the contract (authentication, validation, status codes,
// headers) is applied there. Mount it on the app or on a group:
//
//	api, err := inventory.New(store, inventory.WithAPIKeys(key))
//	...
//	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil { ... }
//
// fasthttp reads a request body into memory before any handler runs, up to
// fiber.Config.BodyLimit (4 MiB by default). The inventory's own limit (16
// KiB by default) still applies to the update body; set BodyLimit to the
// largest body your app accepts anywhere.
package inventoryfiber
