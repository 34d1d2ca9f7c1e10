package checks

import (
	"net/http"

	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// intermediary names the proxy in front of the API, as the answer to a
// plain list shows it (a Via header, or a Server header of a known proxy),
// or "" when the answer shows none. A check asks it only to tell a request
// an intermediary held from one the API failed.
func (c checker) intermediary() string {
	ex := c.Try(wire.Request{Method: http.MethodGet, Path: "/inventory"})
	if ex.Err != nil {
		return ""
	}
	// The answer is the API's, passed on: only a Server header of a known
	// proxy names one (an implementation may send its own).
	return wire.ProxyName(ex.Resp.Header, false)
}

// refusedInFront reports whether ex was refused before the API could see
// it (see wire.FrontRefusal). Such a request cannot be judged through
// that intermediary: the check notes it as not judged, naming it, instead
// of failing. An answer that came from the API, or any other status, is
// judged as usual, so a proxy that changes the API's answers still fails.
func (c checker) refusedInFront(ex *wire.Exchange) bool {
	who, what, ok := wire.FrontRefusal(ex)
	if !ok {
		return false
	}
	c.NoteNotJudged("%s %s (%s) was refused by %s with its own 400 before the API could see it", ex.Req.Method, c.Scrub(ex.URL), what, who)
	return true
}
