package consistency_test

import (
	"maps"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// TestBoundedConsistencyRunsBackToBack: consistency runs one after the
// other on a bounded server pass. The second starts while the server
// still holds a default list the first one's last list read, from before
// the first one's restore: its lists may show it until the bound has
// passed since the restore, so the run starts only then (else they would
// show quantities of a write this run never made).
func TestBoundedConsistencyRunsBackToBack(t *testing.T) {
	const bound = time.Second
	rs := &refserver.Server{MaxStaleness: bound}
	base := rs.Start(t)
	for run := 1; run <= 2; run++ {
		before := rs.Quantities()
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1,
			Consistency: 300 * time.Millisecond, ConsistencyClients: 4, ConsistencyStaleness: bound})
		if err != nil {
			t.Fatal(err)
		}
		after := rs.Quantities()
		if res, _ := rep.Result("consistency/linearizable"); res.Outcome != conformancetest.Pass {
			for _, f := range res.Failures {
				t.Logf("%s: %s", res.Name, f.Problem)
			}
			t.Errorf("run %d: %s", run, res.Outcome)
		}
		if !maps.Equal(before, after) {
			t.Errorf("run %d: quantities %v after the run, %v before", run, after, before)
		}
	}
}
