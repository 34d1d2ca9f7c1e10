package inventory

import (
	"fmt"
	"net/http"

	"github.com/petinventory/petinventory/inventory/internal/wire"
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
	if err := wire.CheckPrefix(prefix); err != nil {
		return nil, fmt.Errorf("inventory: Middleware: %w", err)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, under := wire.Match(r.URL.Path, prefix, true); under {
				a.serveUnder(w, r, r.URL.Path, prefix)
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// serveRelative serves a request whose path relative to where the API is
// mounted is rel: /inventory, /inventory/{petId}, or anything else (404).
func (a *API) serveRelative(w http.ResponseWriter, r *http.Request, rel string) {
	a.serveUnder(w, r, rel, "")
}

// serveUnder serves a request for path, which Match has found under
// prefix: a route, or 404.
func (a *API) serveUnder(w http.ResponseWriter, r *http.Request, path, prefix string) {
	if route, petID, _ := wire.Match(path, prefix, true); route != 0 {
		a.ServeRoute(w, r, Route(route), petID)
		return
	}
	resp := errorResponse(newError(CodeNotFound, "no such route; the inventory API serves GET and HEAD /inventory and PATCH /inventory/{petId}"))
	writeResponse(w, &resp)
}
