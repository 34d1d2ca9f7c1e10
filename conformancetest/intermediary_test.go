package conformancetest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// frontedRef serves the reference server behind a front that answers a
// method in lower case itself, as nginx does, with body and headers from
// front.
func frontedRef(t *testing.T, front func(w http.ResponseWriter)) string {
	rs := &refServer{}
	newRefServer(t, rs) // seeds it
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
	rep, err := RunChecks(t.Context(), Config{BaseURL: nginx, APIKey: refKey, Run: "^routes/unknown-methods$"})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Results[0]
	if res.Outcome != Skip || !strings.Contains(res.Reason, "not judged") || !strings.Contains(res.Reason, "refused by nginx/1.26.3") || !strings.Contains(res.Reason, "get ") {
		t.Fatalf("%s: %q %v", res.Outcome, res.Reason, res.Failures)
	}
	t.Log(res.Reason)

	api400 := frontedRef(t, func(w http.ResponseWriter) {
		refError(w, http.StatusBadRequest, "invalid_method", "bad method")
	})
	rep, err = RunChecks(t.Context(), Config{BaseURL: api400, APIKey: refKey, Run: "^routes/unknown-methods$"})
	if err != nil {
		t.Fatal(err)
	}
	if res := rep.Results[0]; res.Outcome != Fail {
		t.Fatalf("an Error body of 400 for a lowercase method: %s %q", res.Outcome, res.Reason)
	}
}

// TestSkipRegexp: -skip leaves out the checks it matches, after -run.
func TestSkipRegexp(t *testing.T) {
	base := newRefServer(t, &refServer{})
	rep, err := RunChecks(t.Context(), Config{BaseURL: base, APIKey: refKey, Run: "^routes/", Skip: "unknown|trailing"})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if strings.Contains(res.Name, "unknown") || strings.Contains(res.Name, "trailing") {
			t.Errorf("%s ran", res.Name)
		}
	}
	if len(rep.Results) == 0 {
		t.Fatal("nothing ran")
	}
	if _, err := RunChecks(t.Context(), Config{BaseURL: base, APIKey: refKey, Run: "^routes/", Skip: "."}); err == nil || !strings.Contains(err.Error(), "once Skip") {
		t.Errorf("everything skipped: %v", err)
	}
	if _, err := RunChecks(t.Context(), Config{BaseURL: base, APIKey: refKey, Skip: "("}); err == nil || !strings.Contains(err.Error(), "Config.Skip") {
		t.Errorf("a bad Skip: %v", err)
	}
}
