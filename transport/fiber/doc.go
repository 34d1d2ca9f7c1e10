// Package inventoryfiber mounts the petinventory API on a Fiber (v2) router.
//
// It is an adapter and nothing more: it copies each request into an
// adapter.Request (package inventory/adapter), calls adapter.Serve, and
// copies the answer back.
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
// largest body your app accepts anywhere. With StreamRequestBody set, a
// huge update body is refused without being buffered; set
// DisablePreParseMultipartForm too, or fasthttp answers a malformed
// multipart body with its own 400 before the API can answer 415.
package inventoryfiber
