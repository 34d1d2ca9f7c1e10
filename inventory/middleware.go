package inventory

import (
	"fmt"
	"net/http"
	"strings"
)

// Middleware returns a middleware that serves the API's routes under
// prefix ("" or a path such as "/v1", without a trailing slash) and hands
// every other request to the next handler. It is the one call that mounts
// the API on a router that matches routes and methods itself (chi, echo,
// any net/http router with middleware that runs before routing):
//
//	mw, err := api.Middleware("/v1")
//	if err != nil { ... }
//	r.Use(mw)                           // chi
//	e.Pre(echo.WrapMiddleware(mw))      // echo
//
// The API answers every request for {prefix}/inventory and every path
// below it, whatever its method, before the router sees it: so the
// contract's 405s (with Allow, for any method, a lowercase or unknown one
// too), the trailing-slash route and the 404 of a deeper path are the
// API's, never the router's own. The request reaches the API unchanged
// (no copy, no rewritten URL).
func (a *API) Middleware(prefix string) (func(http.Handler) http.Handler, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, fmt.Errorf("inventory: Middleware: %w", err)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rel, ok := underPrefix(r.URL.Path, prefix); ok {
				a.serveRelative(w, r, rel)
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// checkPrefix accepts "" or a path that starts with / and does not end with
// one, with no pattern syntax (for ServeMux) and no white space.
func checkPrefix(prefix string) error {
	if prefix != "" && (!strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") || strings.ContainsAny(prefix, "{} \t")) {
		return fmt.Errorf("prefix %q must be empty or start with / and not end with /", prefix)
	}
	return nil
}

// underPrefix reports whether path is {prefix}/inventory or below it, and
// returns it relative to prefix.
func underPrefix(path, prefix string) (string, bool) {
	rel, ok := strings.CutPrefix(path, prefix)
	if !ok || !strings.HasPrefix(rel, "/inventory") {
		return "", false
	}
	if len(rel) > len("/inventory") && rel[len("/inventory")] != '/' {
		return "", false // /inventoryx is not the API's
	}
	return rel, true
}

// serveRelative serves a request whose path relative to where the API is
// mounted is rel: /inventory, /inventory/{petId}, or anything else (404).
func (a *API) serveRelative(w http.ResponseWriter, r *http.Request, rel string) {
	switch {
	case rel == "/inventory":
		a.ServeRoute(w, r, RouteList, "")
	case strings.HasPrefix(rel, "/inventory/") && !strings.Contains(rel[len("/inventory/"):], "/"):
		a.ServeRoute(w, r, RouteItem, rel[len("/inventory/"):])
	default:
		resp := errorResponse(newError(CodeNotFound, "no such route; the inventory API serves GET /inventory and PATCH /inventory/{petId}"))
		writeResponse(w, &resp)
	}
}
