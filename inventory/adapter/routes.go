package adapter

import (
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// Path is one of the three paths an adapter routes to the API, relative to
// the prefix (the group's path), with every method.
type Path struct {
	Pattern string          // "/inventory", "/inventory/" or "/inventory/" + the wildcard
	Route   inventory.Route // the route it serves
	PetID   bool            // the last segment is the petId wildcard
}

// Paths returns the paths an adapter registers, in the syntax of a router
// whose wildcard for one segment is wildcard (":petId" for Gin and Fiber).
// "/inventory/" is the item route with an empty petId (the contract's
// 400), never a redirect to the list. API.Register, inventorygin and
// inventoryfiber register these same three.
func Paths(wildcard string) [3]Path {
	var out [3]Path
	for i, p := range wire.Paths(wildcard) {
		out[i] = Path{Pattern: p.Pattern, Route: inventory.Route(p.Route), PetID: p.PetID}
	}
	return out
}

// Resolve returns the route and petId of a request that the router
// matched to p, from the request's path (as the router sees it) and the
// value of p's wildcard ("" when p has none). It is p's Route and that
// value, except on a router that ignores a trailing slash (Fiber without
// StrictRouting): "/inventory/" then lands on the list's pattern, and it
// is the item route with an empty petId (the contract's 400), never the
// list. An adapter serves what Resolve returns, so that it decides
// nothing of the routing itself.
func (p Path) Resolve(path, petID string) (inventory.Route, string) {
	r, id := wire.Path{Pattern: p.Pattern, Route: int(p.Route), PetID: p.PetID}.Resolve(path, petID)
	return inventory.Route(r), id
}

// Match finds the route of path (as the router sees it) under prefix, as
// the Paths match it: the list, the item with its raw petId segment, or
// route 0. under reports whether path is {prefix}/inventory or below it:
// the API's to answer, 404 when it is no route. Without caseSensitive the
// case of prefix+"/inventory" is ignored, as in routers that fold case.
// API.Middleware matches with it; an adapter uses it where its router
// cannot route a request (Fiber's unknown methods).
func Match(path, prefix string, caseSensitive bool) (route inventory.Route, petID string, under bool) {
	r, id, u := wire.Match(path, prefix, caseSensitive)
	return inventory.Route(r), id, u
}

// CheckPrefix reports whether prefix is one the API can be mounted under:
// "" or a path that starts with / and does not end with one.
func CheckPrefix(prefix string) error { return wire.CheckPrefix(prefix) }

// The bounds on what is read and discarded of a request body the API
// refused without reading it whole (413, 401, 415, …), after the answer
// is sent and before the connection is closed: closing a socket with
// unread bytes makes the kernel reset the connection, and a client still
// sending its body then loses the answer. API.ServeRoute keeps them on
// net/http; an adapter that drains a body keeps them too.
const (
	DrainMaxBytes = wire.DrainMaxBytes
	DrainMaxTime  = time.Duration(wire.DrainMaxTime)
)
