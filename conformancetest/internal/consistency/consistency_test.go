package consistency_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// TestConsistencyPassesReference: the reference server, one copy of the
// inventory under one lock, is linearizable, through two base URLs.
func TestConsistencyPassesReference(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, Replicas: []string{base + "/"}, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Pass {
		t.Fatalf("%s: %s %v", res.Outcome, res.Reason, res.Failures)
	}
	t.Log(res.Detail)
}

// TestConsistencyCatchesAnotherWrite: an update whose answer is read
// back after its lock is dropped carries another client's write.
func TestConsistencyCatchesAnotherWrite(t *testing.T) {
	base := (&refserver.Server{LostUpdate: true}).Start(t)
	pic := filepath.Join(t.TempDir(), "history.html")
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second, ConsistencyHTML: pic})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Fail || res.Failures[0].Kind != conformancetest.KindAnotherWrite {
		t.Fatalf("%s: %s %v", res.Outcome, res.Reason, res.Failures)
	}
	for _, f := range res.Failures {
		if f.Kind == "" {
			t.Errorf("a failure without its kind: %s", f.Problem)
		}
	}
	if ops := res.Failures[0].Operations; len(ops) == 0 || ops[0].Role != "update" || ops[0].Kind != "update" || ops[0].BaseURL != base || res.Failures[0].Count < 1 {
		t.Errorf("the failure does not name the update: count %d, %+v", res.Failures[0].Count, ops)
	}
	t.Log(res.Failures[0].Problem)
	t.Log(res.Detail)
	b, err := os.ReadFile(pic)
	if err != nil || !strings.Contains(string(b), "<html") {
		t.Fatalf("picture: %v, %d bytes", err, len(b))
	}
	if res.Visualization != pic {
		t.Errorf("Visualization %q", res.Visualization)
	}
}

// TestConsistencyOptIn: without a duration the check is skipped and says
// how to run it.
func TestConsistencyOptIn(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/"})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("consistency/linearizable"); res.Outcome != conformancetest.Skip || !strings.Contains(res.Reason, "-consistency DURATION") {
		t.Fatalf("%s: %s", res.Outcome, res.Reason)
	}
}

// TestConsistencyStalenessBound: a deployment whose second base URL
// answers lists up to 20 ms old passes against a bound of 50 ms (the run
// leaving 50 ms of quiet before each barrier), fails the strict promise,
// and reports an observed staleness above 0 and at most 50 ms in both;
// the reference server alone reports 0.
func TestConsistencyStalenessBound(t *testing.T) {
	run := func(bound time.Duration, front func(http.Handler) http.Handler) conformancetest.Result {
		rs := &refserver.Server{}
		rs.Seed()
		serve := func(h http.Handler) string {
			srv := httptest.NewServer(slowly(h))
			t.Cleanup(srv.Close)
			return srv.URL + "/v1"
		}
		second := serve(rs)
		if front != nil {
			second = serve(front(rs))
		}
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: serve(rs), Replicas: []string{second}, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1,
			Consistency: 600 * time.Millisecond, ConsistencyClients: 4, ConsistencyStaleness: bound})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rep.Result("consistency/linearizable")
		t.Logf("bound %v: %s; %s; observed %s", bound, res.Outcome, res.Detail, res.Consistency.Observed)
		return res
	}
	stale := func(h http.Handler) http.Handler { return staleLists(h, 20*time.Millisecond) }
	for _, tc := range []struct {
		bound time.Duration
		front func(http.Handler) http.Handler
		want  conformancetest.Outcome
		lo    time.Duration // the observed staleness is in (lo, hi]
		hi    time.Duration
	}{
		{50 * time.Millisecond, stale, conformancetest.Pass, 0, 50 * time.Millisecond},
		{0, stale, conformancetest.Fail, 0, 50 * time.Millisecond},
		{0, nil, conformancetest.Pass, -1, 0},
	} {
		res := run(tc.bound, tc.front)
		c := res.Consistency
		if res.Outcome != tc.want || c == nil || c.Staleness != tc.bound {
			t.Fatalf("bound %v: %s, want %s: %v %+v", tc.bound, res.Outcome, tc.want, res.Failures, c)
		}
		if c.ObservedStaleness == nil || *c.ObservedStaleness <= tc.lo || *c.ObservedStaleness > tc.hi {
			t.Errorf("bound %v: observed staleness %v (%s), want in (%v, %v]", tc.bound, c.ObservedStaleness, c.Observed, tc.lo, tc.hi)
		}
	}
}
