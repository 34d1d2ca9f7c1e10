package wire

import (
	"fmt"
	"strings"
	"time"
)

// The routes, as inventory.Route numbers them.
const (
	RouteList = 1
	RouteItem = 2
)

// Path is one of the three paths every mount of the API routes to it,
// relative to the prefix.
type Path struct {
	Pattern string // "/inventory", "/inventory/", "/inventory/" + wildcard
	Route   int
	PetID   bool // the last segment is the petId wildcard
}

// Paths returns the three paths in the syntax of a router whose wildcard
// for one segment is wildcard. "/inventory/" is the item route with an
// empty petId (a 400), never a redirect to the list.
func Paths(wildcard string) [3]Path {
	return [3]Path{
		{"/inventory", RouteList, false},
		{"/inventory/", RouteItem, false},
		{"/inventory/" + wildcard, RouteItem, true},
	}
}

// Resolve returns the route and petId of a request that a router matched
// to p, from the request's path and the value of p's wildcard ("" when p
// has none): p's own, except that a path ending in "/" matched to the
// list's pattern, as a router that ignores a trailing slash matches
// "/inventory/" (Fiber without StrictRouting), is the item route with an
// empty petId, as Paths has it.
func (p Path) Resolve(path, param string) (route int, petID string) {
	if p.Route == RouteList && strings.HasSuffix(path, "/") {
		return RouteItem, ""
	}
	return p.Route, param
}

// Match finds the route of path as the Paths match it under prefix: the
// list, the item (with its raw petId segment), or neither. under reports
// whether path is {prefix}/inventory or below it, that is the API's to
// answer (404 when it is no route). Without caseSensitive the case of the
// prefix and of "/inventory" is ignored, as routers that fold case do.
func Match(path, prefix string, caseSensitive bool) (route int, petID string, under bool) {
	base := len(prefix) + len("/inventory")
	if len(path) < base || !hasBase(path[:base], prefix, caseSensitive) {
		return 0, "", false
	}
	rest := path[base:]
	switch {
	case rest == "":
		return RouteList, "", true
	case rest[0] != '/':
		return 0, "", false // /inventoryx is not the API's
	case !strings.Contains(rest[1:], "/"):
		return RouteItem, rest[1:], true
	}
	return 0, "", true
}

func hasBase(s, prefix string, caseSensitive bool) bool {
	p, inv := s[:len(prefix)], s[len(prefix):]
	if caseSensitive {
		return p == prefix && inv == "/inventory"
	}
	return strings.EqualFold(p, prefix) && strings.EqualFold(inv, "/inventory")
}

// CheckPrefix accepts "" or a path that starts with / and does not end
// with one, with no pattern syntax (for ServeMux) and no white space.
func CheckPrefix(prefix string) error {
	if prefix != "" && (!strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") || strings.ContainsAny(prefix, "{} \t")) {
		return fmt.Errorf("prefix %q must be empty or start with / and not end with /", prefix)
	}
	return nil
}

// What is read and discarded of a request body the API answered without
// reading it whole (413, 401, 415, …), after the answer is sent, before
// the connection is closed: closing a socket with unread bytes makes the
// kernel reset the connection, and a client still sending its body then
// loses the answer it was about to read.
const (
	DrainMaxBytes = 64 << 20
	DrainMaxTime  = 3 * time.Second
)
