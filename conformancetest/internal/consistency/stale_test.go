package consistency_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// staleOutage serves the reference server with a stale-if-error bound of
// 5 s, whose store is unavailable while the file down exists: updates
// and strict lists get 503, default lists the last state read, marked
// stale. Once it has refused three updates and served three lists so
// during the outage it creates the file seen, which the fault that made
// the outage waits for before it ends it.
func staleOutage(t *testing.T) (base, fault string) {
	dir := t.TempDir()
	down, seen := filepath.Join(dir, "down"), filepath.Join(dir, "seen")
	isDown := func() bool { _, err := os.Stat(down); return err == nil }
	rs := &refserver.Server{StaleIfError: 5 * time.Second, Outage: isDown}
	rs.Seed()
	var mu sync.Mutex
	updates, lists := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isDown() {
			mu.Lock()
			if r.Method == http.MethodPatch {
				updates++
			} else if !strings.Contains(r.Header.Get("Cache-Control"), "no-cache") {
				lists++
			}
			if updates >= 3 && lists >= 3 {
				os.WriteFile(seen, nil, 0o600)
			}
			mu.Unlock()
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", "100ms exec touch " + down + " && while [ ! -e " + seen + " ]; do sleep 0.01; done && rm " + down
}

// staleRun runs the consistency check for 1 s against base with the
// fault (none when ""), judged with the stale-if-error bound bound.
func staleRun(t *testing.T, base, fault string, bound time.Duration) conformancetest.Result {
	cfg := conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second, ConsistencyClients: 4,
		ConsistencyStaleIfError: bound}
	if fault != "" {
		f, err := conformancetest.ParseFault(fault)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConsistencyFaults = []conformancetest.Fault{f}
	}
	rep, err := conformancetest.RunChecks(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	return res
}

// TestStaleListsThroughAnOutage: a deployment that serves honest stale
// lists through an outage passes when the run is given its
// stale-if-error bound, and the fault's figures show the lists'
// availability (answered 200, stale among them, the oldest Age); judged
// without the bound, its stale lists fail with kind unexpected-stale.
func TestStaleListsThroughAnOutage(t *testing.T) {
	base, fault := staleOutage(t)
	res := staleRun(t, base, fault, 5*time.Second)
	c := res.Consistency
	if res.Outcome != conformancetest.Pass || c == nil || c.StaleLists == 0 || len(c.Faults) != 1 || c.StaleIfError != 5*time.Second {
		t.Fatalf("with the bound: %s %v: %+v", res.Outcome, res.Failures, c)
	}
	fr := c.Faults[0]
	if fr.Stale == 0 || fr.Answered < fr.Stale || fr.Sent < fr.Answered || fr.OldestAge == nil || *fr.OldestAge > 5 || !strings.Contains(fr.Line(), "of them stale (oldest Age") {
		t.Errorf("the fault's lists: %+v; %s", fr.ListFigures, fr.Line())
	}
	t.Log(fr.Line())
	base, fault = staleOutage(t)
	res = staleRun(t, base, fault, 0)
	if res.Outcome != conformancetest.Fail || !slices.Contains(kinds(res), conformancetest.KindUnexpectedStale) {
		t.Fatalf("without the bound: %s, kinds %q", res.Outcome, kinds(res))
	}
}

// TestStaleBeyondBound: a deployment that marks its lists stale but
// serves states older than the bound it declares (and the run is given)
// fails with kind stale-beyond-bound.
func TestStaleBeyondBound(t *testing.T) {
	base := (&refserver.Server{StaleIfError: 300 * time.Millisecond, Broken: "stale beyond its bound"}).Start(t)
	res := staleRun(t, base, "", 300*time.Millisecond)
	if res.Outcome != conformancetest.Fail || !slices.Contains(kinds(res), conformancetest.KindStaleBeyondBound) {
		t.Fatalf("%s, kinds %q: %v", res.Outcome, kinds(res), res.Failures)
	}
	t.Log(res.Failures[slices.Index(kinds(res), conformancetest.KindStaleBeyondBound)].Problem)
}
