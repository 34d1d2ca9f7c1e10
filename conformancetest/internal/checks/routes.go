package checks

import (
	"net/http"
	"slices"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcRoutes = "CONTRACT.md §Routes"

// Routes are the checks of the two routes: which methods each serves, and
// what every other method gets.
var Routes = []*suite.Check{
	{
		Name:   "routes/list-other-methods",
		Source: srcRoutes,
		Rule:   "Any other method on {base}/inventory (POST, PUT, DELETE, PATCH, OPTIONS) is 405 method_not_allowed with Allow: GET, HEAD.",
		Run:    run(routesListOtherMethods),
	},
	{
		Name:   "routes/item-other-methods",
		Source: srcRoutes,
		Rule:   "Any other method on {base}/inventory/{petId} (GET, POST, PUT, DELETE, HEAD, OPTIONS) is 405 method_not_allowed with Allow: PATCH.",
		Run:    run(routesItemOtherMethods),
	},
	{
		Name:   "routes/unknown-methods",
		Source: srcRoutes,
		Rule:   "A method outside the standard set (FOO, PROPFIND, a lowercase get: methods are case-sensitive) is 405 method_not_allowed with Allow, on both routes.",
		Run:    run(routesUnknownMethods),
	},
	{
		Name:   "routes/trailing-slash",
		Source: srcRoutes + " (decision: trailing slash)",
		Rule:   "{base}/inventory/ is the item route with an empty petId: GET there is 405 with Allow: PATCH, not the list and not a redirect.",
		Run:    run(routesTrailingSlash),
	},
}

// routesListOtherMethods judges routes/list-other-methods.
func routesListOtherMethods(c checker) {
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		c.expect405(c.Do(otherMethod(m, "/inventory")), listAllow)
	}
}

// routesItemOtherMethods judges routes/item-other-methods.
func routesItemOtherMethods(c checker) {
	p := wire.ItemPath(c.UnlistedID())
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodOptions} {
		c.expect405(c.Do(otherMethod(m, p)), http.MethodPatch)
	}
}

// routesUnknownMethods judges routes/unknown-methods.
func routesUnknownMethods(c checker) {
	item := wire.ItemPath(c.UnlistedID())
	for _, p := range []struct{ method, path, allow string }{
		{"FOO", "/inventory", listAllow},
		{"PROPFIND", "/inventory", listAllow},
		{"get", "/inventory", listAllow},
		{"FOO", item, http.MethodPatch},
		{"PROPFIND", item, http.MethodPatch},
		{"patch", item, http.MethodPatch},
	} {
		ex := c.Do(wire.Request{Method: p.method, Path: p.path})
		if c.refusedInFront(ex) {
			continue
		}
		c.expect405(ex, p.allow)
	}
}

// routesTrailingSlash judges routes/trailing-slash.
func routesTrailingSlash(c checker) {
	c.expect405(c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory/"}), http.MethodPatch)
}

// otherMethod is a request with a method the path does not serve; methods
// that usually carry a body get a harmless one.
func otherMethod(method, path string) wire.Request {
	r := wire.Request{Method: method, Path: path}
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		r.ContentType = "application/json"
		r.Body = []byte(`{"quantity":1}`)
	}
	return r
}

// listAllow is the Allow header of the list's 405s: the list serves GET
// and HEAD (HEAD is GET without the body).
const listAllow = "GET, HEAD"

// expect405 checks a 405 answer and its Allow header, whose methods are
// allow's, in any order and on one line or several.
func (c checker) expect405(ex *wire.Exchange, allow string) {
	if !c.expectError(ex, http.StatusMethodNotAllowed, "method_not_allowed") {
		return
	}
	expected := "405 with Allow: " + allow
	vals := ex.Resp.Header.Values("Allow")
	if len(vals) == 0 {
		c.Failf(ex, expected, "no Allow header")
		return
	}
	var got []string
	for _, v := range vals {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				got = append(got, m)
			}
		}
	}
	want := strings.Split(allow, ", ")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		c.Failf(ex, expected, "Allow: %s", strings.Join(vals, ", "))
	}
}
