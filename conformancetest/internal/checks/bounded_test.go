package checks_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/checks"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// The checks of the default list against a deployment with a staleness
// bound (see the root package's TestBoundedReferenceServerPasses).

// TestDefaultListJudged: the checks that look at the default list after
// an update fail a deployment whose default list is older than the bound
// given (the server's bound is an hour, the run's 20 ms), and one that
// does not show the update within maxUndeclaredStaleness when no bound
// is given; and they say when the default list showed an update late.
func TestDefaultListJudged(t *testing.T) {
	const run = "^(update/visible-in-list|etag/changes-after-update)$"
	for _, tc := range []struct {
		name    string
		bound   time.Duration
		mention string
	}{
		{"older than the bound given", 20 * time.Millisecond, "the default list (no Cache-Control), sent the staleness bound of 20ms after the update's answer,"},
		{"no bound given, never shows it", 0, "the default list (no Cache-Control)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(d time.Duration) { *checks.MaxUndeclaredStaleness = d }(*checks.MaxUndeclaredStaleness)
			*checks.MaxUndeclaredStaleness = 100 * time.Millisecond
			// The probe's default list is held for the whole run.
			rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: (&refserver.Server{MaxStaleness: time.Hour}).Start(t), APIKey: refserver.Key, Run: run, ConsistencyStaleness: tc.bound})
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range rep.Results {
				if res.Outcome != conformancetest.Fail {
					t.Errorf("%s: %s, want a failure", res.Name, res.Outcome)
					continue
				}
				if len(res.Failures) == 0 || !strings.Contains(res.Failures[0].Expected, tc.mention) || res.Failures[0].Exchange.Request.Header["Cache-Control"] != "" {
					t.Errorf("%s: the failure does not name the default list (%q): %+v", res.Name, tc.mention, res.Failures)
				}
			}
		})
	}
	t.Run("no bound given, shows it late", func(t *testing.T) {
		// The probe's default list is held for a second, past which the
		// check's lists show the update.
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: (&refserver.Server{MaxStaleness: time.Second}).Start(t), APIKey: refserver.Key, Run: "^update/visible-in-list$"})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rep.Result("update/visible-in-list")
		if res.Outcome != conformancetest.Pass || !strings.Contains(res.Detail, "the default list (no Cache-Control) showed the update in a list sent") || !strings.Contains(res.Detail, "-consistency-staleness") {
			t.Errorf("%s %q %v", res.Outcome, res.Detail, res.Failures)
		}
		t.Log(res.Detail)
	})
}

// TestStableTagAfterSameBodyWrite: a write that puts back the body a list
// showed is a new state with a new tag (a restore that a bounded
// deployment's held list did not show yet, or another client's): when
// the tag then holds, etag/stable tries again and passes; a tag that
// changes on every list still fails it.
func TestStableTagAfterSameBodyWrite(t *testing.T) {
	rs := &refserver.Server{}
	rs.Seed() // served below behind the write
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" {
			if lists.Add(1) == 3 { // after the probe's list and the first of the pair
				rs.NewState() // a write of the same quantity
			}
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^etag/stable$"})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("etag/stable"); res.Outcome != conformancetest.Pass {
		t.Errorf("one same-body write: %s %v", res.Outcome, res.Failures)
	}
	if res, _ := runRef(t, &refserver.Server{Broken: "a new tag on every list"}, "^etag/stable$").Result("etag/stable"); res.Outcome != conformancetest.Fail {
		t.Errorf("a new tag on every list: %s", res.Outcome)
	}
}

// TestStarMatchesTheStateNow: If-None-Match: * matches whatever state is
// current, so a write between the list and the conditional list (another
// client's, or a bounded deployment's held state renewed after a restore)
// gives a 304 naming the new tag, and etag/not-modified passes; a 304 to *
// naming a tag no list shows still fails it.
func TestStarMatchesTheStateNow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bogus bool
		want  conformancetest.Outcome
	}{{"a write before the * list", false, conformancetest.Pass}, {"a 304 naming no state", true, conformancetest.Fail}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &refserver.Server{}
			rs.Seed()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				star := r.Method == http.MethodGet && r.Header.Get("If-None-Match") == "*"
				switch {
				case star && !tc.bogus:
					rs.NewState() // a write of the same quantity, just before
				case star:
					w = etagRewriter{w}
				}
				rs.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^etag/not-modified$"})
			if err != nil {
				t.Fatal(err)
			}
			if res, _ := rep.Result("etag/not-modified"); res.Outcome != tc.want {
				t.Errorf("%s, want %s: %v", res.Outcome, tc.want, res.Failures)
			}
		})
	}
}

// etagRewriter answers with an entity tag no state has.
type etagRewriter struct{ http.ResponseWriter }

func (e etagRewriter) WriteHeader(status int) {
	e.Header().Set("ETag", `"0000000000000000000000000000beef"`)
	e.ResponseWriter.WriteHeader(status)
}
