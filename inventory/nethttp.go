package inventory

import (
	"net/http"
	"strings"
)

// ServeHTTP makes the API an http.Handler for paths relative to where it is
// mounted: /inventory and /inventory/{petId}. Mount it under a prefix with
// http.StripPrefix:
//
//	mux.Handle("/v1/", http.StripPrefix("/v1", api))
//
// Any other path is answered 404 not_found with an Error body.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/inventory":
		a.ServeRoute(w, r, RouteList, "")
	case strings.HasPrefix(path, "/inventory/") && !strings.Contains(path[len("/inventory/"):], "/"):
		a.ServeRoute(w, r, RouteItem, path[len("/inventory/"):])
	default:
		resp := errorResponse(Errorf(CodeNotFound, "no such route; the inventory API serves GET /inventory and PATCH /inventory/{petId}"))
		WriteResponse(w, &resp)
	}
}

// ServeRoute serves one request for a router built on net/http that has
// matched the route itself and extracted petId (Gin, chi, echo, gorilla).
// For Gin, see package inventorygin.
func (a *API) ServeRoute(w http.ResponseWriter, r *http.Request, route Route, petID string) {
	var body = r.Body
	if r.Body == http.NoBody {
		body = nil
	}
	resp := a.Serve(r.Context(), Request{
		Method:        r.Method,
		Route:         route,
		PetID:         petID,
		Authorization: r.Header.Get("Authorization"),
		ContentType:   r.Header.Get("Content-Type"),
		ContentLength: r.ContentLength,
		Body:          body,
	})
	WriteResponse(w, &resp)
}

// WriteResponse copies resp to w, then releases it.
func WriteResponse(w http.ResponseWriter, resp *Response) {
	h := w.Header()
	// Set canonicalises the name ("WWW-Authenticate" is kept as
	// "Www-Authenticate"), so that middleware reading h.Get finds it.
	resp.VisitHeaders(h.Set)
	h["Content-Length"] = []string{itoa(len(resp.Body))}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body) // a client gone away is nobody's error to report
	resp.Release()
}
