package checks_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// staleCheck runs headers/stale-if-error against h.
func staleCheck(t *testing.T, h http.Handler) conformancetest.Result {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^headers/stale-if-error$"})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("headers/stale-if-error")
	return res
}

// withMember adds a member of another cache to every Cache-Status, as a
// CDN in front may.
func withMember(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(memberWriter{w}, r)
	})
}

type memberWriter struct{ http.ResponseWriter }

func (m memberWriter) WriteHeader(status int) {
	if cs := m.Header().Get("Cache-Status"); cs != "" {
		m.Header().Set("Cache-Status", cs+`, ExampleCDN; hit; detail="from the edge"`)
	}
	m.ResponseWriter.WriteHeader(status)
}

// TestHeadersStaleIfError: the stale-if-error headers of the reference
// server pass, fresh and marked stale through an outage, also with a
// cache's member after its own; a deployment without the option passes
// and the detail says nothing was declared; each broken form fails.
func TestHeadersStaleIfError(t *testing.T) {
	var down atomic.Bool
	always := func() bool { return down.Load() }
	// serve seeds rs and has it read its state once, before its outage
	// starts: the state it serves stale.
	serve := func(rs *refserver.Server) http.Handler {
		rs.Seed()
		down.Store(false)
		r := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
		r.Header.Set("Authorization", "Bearer "+refserver.Key)
		rec := httptest.NewRecorder()
		rs.ServeHTTP(rec, r)
		down.Store(true)
		if rs.Outage != nil && rs.Broken == "" {
			// The outage serves that state, marked stale.
			rec := httptest.NewRecorder()
			rs.ServeHTTP(rec, r)
			if rec.Header().Get("Cache-Status") != refserver.CacheStatusStale || rec.Header().Get("Age") != "0" {
				t.Fatalf("the reference server's outage serves no stale list: %d %v", rec.Code, rec.Header())
			}
		}
		return rs
	}
	for _, tc := range []struct {
		name   string
		rs     *refserver.Server
		member bool
		want   string // a word of the failure; "" for a pass
	}{
		{name: "without the option", rs: &refserver.Server{}},
		{name: "declared, fresh", rs: &refserver.Server{StaleIfError: 30 * time.Second}},
		{name: "marked stale", rs: &refserver.Server{StaleIfError: 30 * time.Second, Outage: always}},
		{name: "marked stale, a CDN's member after", rs: &refserver.Server{StaleIfError: 30 * time.Second, Outage: always}, member: true},
		{name: "malformed stale-if-error", rs: &refserver.Server{StaleIfError: 30 * time.Second, Broken: "malformed stale-if-error"}, want: "whole seconds"},
		{name: "stale without Age", rs: &refserver.Server{StaleIfError: 30 * time.Second, Outage: always, Broken: "stale without Age"}, want: "no Age header"},
		{name: "Age beyond", rs: &refserver.Server{StaleIfError: 30 * time.Second, Outage: always, Broken: "Age beyond stale-if-error"}, want: "older than the stale-if-error=30"},
		{name: "malformed Cache-Status", rs: &refserver.Server{StaleIfError: 30 * time.Second, Outage: always, Broken: "malformed Cache-Status"}, want: "a comma with no member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := serve(tc.rs)
			if tc.member {
				h = withMember(h)
			}
			res := staleCheck(t, h)
			switch {
			case tc.want == "" && res.Outcome != conformancetest.Pass:
				t.Fatalf("%s: %v", res.Outcome, res.Failures)
			case tc.want != "" && (res.Outcome != conformancetest.Fail || !strings.Contains(res.Failures[0].Problem, tc.want)):
				t.Fatalf("%s %v, want a failure saying %q", res.Outcome, res.Failures, tc.want)
			case tc.name == "without the option" && !strings.Contains(res.Detail, "declares no stale-if-error"):
				t.Errorf("detail %q", res.Detail)
			}
		})
	}
}
