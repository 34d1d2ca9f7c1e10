package conformancetest

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// The suite against a deployment with a staleness bound: its default
// lists may be up to the bound old, its strict lists (Cache-Control:
// no-cache) are not. The reference server with MaxStaleness answers every
// default list from the state it read last as long as the bound lets it,
// so that any state the suite learnt from a default list would be stale.

// refBound is the bound of the bounded reference server.
const refBound = 150 * time.Millisecond

// verdicts runs the whole suite against base and returns each check's
// outcome, and the server's quantities before and after the run.
func verdicts(t *testing.T, rs *refserver.Server, base string, cfg Config) (map[string]Outcome, map[int64]int64, map[int64]int64) {
	t.Helper()
	cfg.BaseURL, cfg.APIKey = base, refserver.Key
	before := rs.Quantities()
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
	return out, before, rs.Quantities()
}

// TestBoundedReferenceServerPasses: against the bounded reference server
// every check gets the verdict it gets against the strict one, twice in a
// row on the same server, without a bound given and with the server's
// (then with a consistency run, which the bound lets pass); every run
// leaves the quantities it found.
func TestBoundedReferenceServerPasses(t *testing.T) {
	strict := &refserver.Server{}
	want, _, _ := verdicts(t, strict, strict.Start(t), Config{})
	for _, bound := range []time.Duration{0, refBound} {
		rs := &refserver.Server{MaxStaleness: refBound}
		base := rs.Start(t)
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
