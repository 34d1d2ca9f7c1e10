package conformancetest

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The suite against a deployment with a staleness bound: its default
// lists may be up to the bound old, its strict lists (Cache-Control:
// no-cache) are not. The reference server with maxStaleness answers every
// default list from the state it read last as long as the bound lets it,
// so that any state the suite learnt from a default list would be stale.

// refBound is the bound of the bounded reference server.
const refBound = 150 * time.Millisecond

// verdicts runs the whole suite against base and returns each check's
// outcome, and the server's quantities before and after the run.
func verdicts(t *testing.T, rs *refServer, base string, cfg Config) (map[string]Outcome, map[int64]int64, map[int64]int64) {
	t.Helper()
	quantities := func() map[int64]int64 {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return maps.Clone(rs.qty)
	}
	cfg.BaseURL, cfg.APIKey = base, refKey
	before := quantities()
	rep, err := RunChecks(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Outcome{}
	for _, res := range rep.Results {
		out[res.Name] = res.Outcome
		if res.Outcome == Fail && (res.Name == "update/visible-in-list" || res.Name == "concurrency/parallel-updates" || strings.HasPrefix(res.Name, "consistency/")) {
			for _, f := range res.Failures {
				t.Logf("%s: %s", res.Name, f.Problem)
			}
		}
	}
	return out, before, quantities()
}

// TestBoundedReferenceServerPasses: against the bounded reference server
// every check gets the verdict it gets against the strict one, twice in a
// row on the same server, without a bound given and with the server's
// (then with a consistency run, which the bound lets pass); every run
// leaves the quantities it found.
func TestBoundedReferenceServerPasses(t *testing.T) {
	strict := &refServer{}
	want, _, _ := verdicts(t, strict, newRefServer(t, strict), Config{})
	for _, bound := range []time.Duration{0, refBound} {
		rs := &refServer{maxStaleness: refBound}
		base := newRefServer(t, rs)
		cfg := Config{ConsistencyStaleness: bound}
		if bound > 0 {
			cfg.Consistency, cfg.ConsistencyClients = 500*time.Millisecond, 4
		}
		for run := 1; run <= 2; run++ {
			got, before, after := verdicts(t, rs, base, cfg)
			for name, outcome := range got {
				w, ok := want[name]
				if name == "consistency/linearizable" && bound > 0 {
					w, ok = Pass, true
				}
				if !ok || outcome != w {
					t.Errorf("bound %v, run %d: %s %s, against the strict server %s", bound, run, name, outcome, w)
				}
			}
			if !maps.Equal(before, after) {
				t.Errorf("bound %v, run %d: quantities %v after the run, %v before", bound, run, after, before)
			}
		}
	}
}

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
			defer func(d time.Duration) { maxUndeclaredStaleness = d }(maxUndeclaredStaleness)
			maxUndeclaredStaleness = 100 * time.Millisecond
			// The probe's default list is held for the whole run.
			rep, err := RunChecks(t.Context(), Config{BaseURL: newRefServer(t, &refServer{maxStaleness: time.Hour}), APIKey: refKey, Run: run, ConsistencyStaleness: tc.bound})
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range rep.Results {
				if res.Outcome != Fail {
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
		rep, err := RunChecks(t.Context(), Config{BaseURL: newRefServer(t, &refServer{maxStaleness: time.Second}), APIKey: refKey, Run: "^update/visible-in-list$"})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rep.Result("update/visible-in-list")
		if res.Outcome != Pass || !strings.Contains(res.Detail, "the default list (no Cache-Control) showed the update in a list sent") || !strings.Contains(res.Detail, "-consistency-staleness") {
			t.Errorf("%s %q %v", res.Outcome, res.Detail, res.Failures)
		}
		t.Log(res.Detail)
	})
}

// TestBoundedConsistencyRunsBackToBack: consistency runs one after the
// other on a bounded server pass. The second starts while the server
// still holds a default list the first one's last list read, from before
// the first one's restore: its lists may show it until the bound has
// passed since the restore, so the run starts only then (else they would
// show quantities of a write this run never made).
func TestBoundedConsistencyRunsBackToBack(t *testing.T) {
	const bound = time.Second
	rs := &refServer{maxStaleness: bound}
	base := newRefServer(t, rs)
	for run := 1; run <= 2; run++ {
		got, before, after := verdicts(t, rs, base, Config{Run: "^consistency/", Consistency: 300 * time.Millisecond, ConsistencyClients: 4, ConsistencyStaleness: bound})
		if got["consistency/linearizable"] != Pass {
			t.Errorf("run %d: %s", run, got["consistency/linearizable"])
		}
		if !maps.Equal(before, after) {
			t.Errorf("run %d: quantities %v after the run, %v before", run, after, before)
		}
	}
}

// TestStableTagAfterSameBodyWrite: a write that puts back the body a list
// showed is a new state with a new tag (a restore that a bounded
// deployment's held list did not show yet, or another client's): when
// the tag then holds, etag/stable tries again and passes; a tag that
// changes on every list still fails it.
func TestStableTagAfterSameBodyWrite(t *testing.T) {
	rs := &refServer{}
	newRefServer(t, rs) // for its seed; served below behind the write
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" {
			if lists.Add(1) == 3 { // after the probe's list and the first of the pair
				rs.mu.Lock()
				rs.version++ // a write of the same quantity
				rs.mu.Unlock()
			}
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rep, err := RunChecks(t.Context(), Config{BaseURL: srv.URL + "/v1", APIKey: refKey, Run: "^etag/stable$"})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("etag/stable"); res.Outcome != Pass {
		t.Errorf("one same-body write: %s %v", res.Outcome, res.Failures)
	}
	if res, _ := runRef(t, &refServer{broken: "a new tag on every list"}, "^etag/stable$").Result("etag/stable"); res.Outcome != Fail {
		t.Errorf("a new tag on every list: %s", res.Outcome)
	}
}
