package consistency_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// kinds are the kinds of res's failures.
func kinds(res conformancetest.Result) []string {
	var out []string
	for _, f := range res.Failures {
		out = append(out, f.Kind)
	}
	return out
}

// TestRecoveryFigure: a run whose fault ends and whose deployment answers
// again reports how long after the fault's end it recovered, in the
// result, the text and the saved history, which a replay measures again.
func TestRecoveryFigure(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	hist := filepath.Join(t.TempDir(), "history.json")
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: 500 * time.Millisecond,
		ConsistencyFaults: []conformancetest.Fault{{Offset: 100 * time.Millisecond, Kind: conformancetest.FaultExec, Args: []string{"true"}}}, ConsistencyHistory: hist})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	c := res.Consistency
	if res.Outcome != conformancetest.Pass || c == nil || c.RecoveredAfter == nil || !strings.HasPrefix(c.Recovered, "recovered ") || c.RecoveryLimit != conformancetest.DefaultConsistencyRecovery {
		t.Fatalf("%s %v: %+v", res.Outcome, res.Failures, c)
	}
	var text bytes.Buffer
	rep.WriteText(&text, false)
	if !strings.Contains(text.String(), "consistency/linearizable: recovered ") {
		t.Errorf("the text report does not say the recovery:\n%s", text.String())
	}
	var saved struct {
		RecoveryLimitNs int64 `json:"recoveryLimitNs"`
		Requests        []struct {
			Strict bool `json:"strict"`
		} `json:"requests"`
	}
	b, _ := os.ReadFile(hist)
	if err := json.Unmarshal(b, &saved); err != nil || saved.RecoveryLimitNs != int64(conformancetest.DefaultConsistencyRecovery) ||
		!slices.ContainsFunc(saved.Requests, func(r struct {
			Strict bool `json:"strict"`
		}) bool {
			return r.Strict
		}) {
		t.Errorf("the history does not keep the recovery limit and the strict lists: %v", err)
	}
	again, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: hist})
	if err != nil {
		t.Fatal(err)
	}
	if rc := again.Results[0].Consistency; rc.Recovered != c.Recovered || *rc.RecoveredAfter != *c.RecoveredAfter {
		t.Errorf("replayed: %q, want %q", rc.Recovered, c.Recovered)
	}
	t.Log(c.Recovered)
}

// downFrom answers 503 to every request once the file down exists.
func downFrom(down string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(down); err == nil {
			w.Header().Set("Retry-After", "0")
			refserver.Error(w, http.StatusServiceUnavailable, "unavailable", "down")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestNotRecovered: a deployment that a fault takes down for good fails
// with kind not-recovered once the limit has passed, naming the fault,
// and -json says so.
func TestNotRecovered(t *testing.T) {
	dir := t.TempDir()
	down := filepath.Join(dir, "down")
	rs := &refserver.Server{}
	rs.Seed()
	srv := httptest.NewServer(downFrom(down, rs))
	t.Cleanup(srv.Close)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: 300 * time.Millisecond,
		ConsistencyFaults: []conformancetest.Fault{{Offset: 100 * time.Millisecond, Kind: conformancetest.FaultExec, Args: []string{"touch " + down}}}, ConsistencyRecovery: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	at := slices.Index(kinds(res), conformancetest.KindNotRecovered)
	if res.Outcome != conformancetest.Fail || at < 0 || res.Consistency.RecoveredAfter != nil || !strings.HasPrefix(res.Consistency.Recovered, "not recovered") {
		t.Fatalf("%s, kinds %q: %+v", res.Outcome, kinds(res), res.Consistency)
	}
	f := res.Failures[at]
	if !strings.Contains(f.AfterFault, "touch") || !strings.Contains(f.Problem, "within 400ms (-consistency-recovery)") {
		t.Errorf("afterFault %q, problem %s", f.AfterFault, f.Problem)
	}
	js, _ := json.Marshal(rep)
	if !bytes.Contains(js, []byte(`"kind":"not-recovered"`)) || !bytes.Contains(js, []byte(`"recovered":"not recovered`)) {
		t.Errorf("-json: %s", js)
	}
	t.Log(f.Problem)
}

// TestRestoreRetried: the restore after a run with faults retries an
// update answered 503 (the deployment re-syncing after a failover)
// within the recovery limit, and so puts every quantity back: the check
// passes.
func TestRestoreRetried(t *testing.T) {
	rs := &refserver.Server{}
	rs.Seed()
	before := rs.Quantities()
	var refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The restore writes the quantities before the run, below the
		// run's own (a million and more): the first is answered 503.
		if r.Method == http.MethodPatch {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var v struct{ Quantity int64 }
			if json.Unmarshal(body, &v) == nil && v.Quantity < 1_000_000 && refused.Add(1) == 1 {
				refserver.Error(w, http.StatusServiceUnavailable, "unavailable", "re-syncing")
				return
			}
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: 300 * time.Millisecond,
		ConsistencyFaults: []conformancetest.Fault{{Offset: 0, Kind: conformancetest.FaultExec, Args: []string{"true"}}}})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Pass || refused.Load() < 1 {
		t.Fatalf("%s, %d restore updates refused: %v", res.Outcome, refused.Load(), res.Failures)
	}
	if now := rs.Quantities(); !maps.Equal(now, before) {
		t.Errorf("quantities %v after the run, want %v", now, before)
	}
}
