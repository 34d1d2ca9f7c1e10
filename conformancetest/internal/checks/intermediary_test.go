package checks_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// frontedRef serves the reference server behind a front that answers a
// method in lower case itself, as nginx does, with body and headers from
// front.
func frontedRef(t *testing.T, front func(w http.ResponseWriter)) string {
	rs := &refserver.Server{}
	rs.Seed()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == strings.ToLower(r.Method) {
			front(w)
			return
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestIntermediaryRefusalNotJudged: a lowercase method refused by the
// proxy's own 400 page is not judged, naming the proxy; the same refusal
// with the API's Error body (a proxy rewriting what the API said, or the
// API itself) fails.
func TestIntermediaryRefusalNotJudged(t *testing.T) {
	nginx := frontedRef(t, func(w http.ResponseWriter) {
		w.Header().Set("Server", "nginx/1.26.3")
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte("<html><head><title>400 Bad Request</title></head></html>"))
	})
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: nginx, APIKey: refserver.Key, Run: "^routes/unknown-methods$"})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Results[0]
	if res.Outcome != conformancetest.Skip || !strings.Contains(res.Reason, "not judged") || !strings.Contains(res.Reason, "refused by nginx/1.26.3") || !strings.Contains(res.Reason, "get ") {
		t.Fatalf("%s: %q %v", res.Outcome, res.Reason, res.Failures)
	}
	t.Log(res.Reason)

	api400 := frontedRef(t, func(w http.ResponseWriter) {
		refserver.Error(w, http.StatusBadRequest, "invalid_method", "bad method")
	})
	rep, err = conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: api400, APIKey: refserver.Key, Run: "^routes/unknown-methods$"})
	if err != nil {
		t.Fatal(err)
	}
	if res := rep.Results[0]; res.Outcome != conformancetest.Fail {
		t.Fatalf("an Error body of 400 for a lowercase method: %s %q", res.Outcome, res.Reason)
	}
}
