// Package adapter is for authors of framework adapters: the
// transport-neutral request and response through which a framework that is
// not built on net/http (Fiber, fasthttp, a test harness) serves an
// inventory.API. The Fiber adapter (package inventoryfiber) is written
// with it and is the example to follow.
//
// Frameworks built on net/http need none of this: an *inventory.API is an
// http.Handler, API.Register mounts it on a ServeMux, API.Middleware in
// front of any router, and API.ServeRoute serves a route that an adapter's
// router has matched (inventorygin uses it).
//
// An adapter copies the request in and the response out, and decides
// nothing: every status, header and body comes from Serve, so that the API
// behaves the same on every framework. Register every method (HEAD too)
// on the three paths Paths gives, so that other methods get the
// contract's 405:
//
//	{prefix}/inventory           Route inventory.RouteList
//	{prefix}/inventory/          Route inventory.RouteItem, PetID ""
//	{prefix}/inventory/{petId}   Route inventory.RouteItem
//
// Where the router cannot route a request at all (Fiber's unknown
// methods), Match finds its route as those paths would. A refused body is
// drained within DrainMaxBytes and DrainMaxTime.
//
// The conformance suite (module conformancetest) checks an adapter over
// real sockets; run it against a test server of yours.
package adapter
