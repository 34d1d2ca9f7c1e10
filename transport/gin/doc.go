// Package inventorygin mounts the petinventory API on a Gin router.
//
// It is an adapter and nothing more: it hands each request to
// inventory.API.ServeRoute with the route and petId gin matched, and every
// rule of the contract (authentication, validation, status codes, headers)
// is applied there. Mount it on the engine or on a group:
//
//	api, err := inventory.New(store, inventory.WithAPIKeys(key))
//	...
//	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil { ... }
//	noRoute, err := inventorygin.NoRoute(api, "/v1")
//	if err != nil { ... }
//	engine.NoRoute(noRoute)
//
// NoRoute lets the API answer what gin routes nowhere: a method outside
// the standard set (PROPFIND, a lowercase get) on the inventory paths,
// which the contract answers 405 with Allow.
//
// The host's middleware runs before the inventory routes as for any other
// route, and the engine's settings are left as they are.
package inventorygin
