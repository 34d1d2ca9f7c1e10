package refserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The reference server's stale-if-error mode (docs/CONTRACT.md "Through a
// store outage"): with StaleIfError set, every list answer declares
// Cache-Control: private, no-cache, stale-if-error=S, and during an
// outage a default list is answered from the last state the server read,
// if it was read at most StaleIfError before, with Age (whole seconds
// since that read) and Cache-Status: petinventory; fwd=stale;
// fwd-status=503. A strict list and an update get 503.
//
// Broken knobs of the mode: "stale beyond its bound" (every default list
// answered, marked stale, from a state renewed only every three bounds,
// outage or not), "stale without Age", "Age beyond stale-if-error",
// "malformed stale-if-error" (stale-if-error=soon) and "malformed
// Cache-Status" (a list that ends with a comma).

// CacheStatusStale is the Cache-Status of a list answered stale.
const CacheStatusStale = "petinventory; fwd=stale; fwd-status=503"

// strict reports whether list r asks for a strict answer.
func strict(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Cache-Control")), "no-cache")
}

// down reports whether the store is unavailable now.
func (rs *Server) down() bool { return rs.Outage != nil && rs.Outage() }

// listState is the state list r shows and whether it is answered stale;
// ok is false for a list answered 503 (during an outage, a strict list,
// or a default list with no state within the bound).
func (rs *Server) listState(r *http.Request) (st refState, stale, ok bool) {
	if rs.Broken == "stale beyond its bound" && !strict(r) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if rs.frozen == nil || time.Since(rs.frozen.read) > 3*rs.StaleIfError {
			f := rs.current(time.Now())
			rs.frozen = &f
		}
		return *rs.frozen, true, true
	}
	if !rs.down() {
		return rs.state(r), false, true
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	c := rs.confirmed
	if strict(r) || rs.StaleIfError == 0 || c == nil || time.Since(c.read) > rs.StaleIfError {
		return refState{}, false, false
	}
	return *c, true, true
}

// staleHeaders sets the headers of the mode on a list answer of state st,
// answered stale or not.
func (rs *Server) staleHeaders(h http.Header, st refState, stale bool) {
	if rs.StaleIfError == 0 {
		return
	}
	declared := strconv.FormatInt(int64(rs.StaleIfError/time.Second), 10)
	if rs.Broken == "malformed stale-if-error" {
		declared = "soon"
	}
	h.Set("Cache-Control", h.Get("Cache-Control")+", stale-if-error="+declared)
	if !stale {
		return
	}
	age, status := int64(time.Since(st.read)/time.Second), CacheStatusStale
	switch rs.Broken {
	case "Age beyond stale-if-error":
		age = int64(rs.StaleIfError/time.Second) + 5
	case "malformed Cache-Status":
		status += "," // a list that ends with a comma
	}
	h.Set("Cache-Status", status)
	if rs.Broken != "stale without Age" {
		h.Set("Age", strconv.FormatInt(age, 10))
	}
}
