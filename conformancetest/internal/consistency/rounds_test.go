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
	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// TestRoundsGiveClientsTheirTime: behind a deployment whose requests take
// 20 ms and whose strict lists (the barriers) 150 ms more, every round
// still has its clients' requests (a round's time starts when the
// barrier before it has returned: a slow barrier eats no round), and the
// rounds grow with the latency met, beyond the loopback's 100 ms.
func TestRoundsGiveClientsTheirTime(t *testing.T) {
	rs := &refserver.Server{}
	rs.Seed()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		if strings.Contains(r.Header.Get("Cache-Control"), "no-cache") {
			time.Sleep(150 * time.Millisecond)
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	hist := filepath.Join(t.TempDir(), "history.json")
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1,
		Consistency: 1500 * time.Millisecond, ConsistencyClients: 4, ConsistencyHistory: hist})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Pass || res.Consistency.Round <= 100*time.Millisecond {
		t.Fatalf("%s %v, rounds of up to %v: want a pass, and rounds longer than the loopback's", res.Outcome, res.Failures, res.Consistency.Round)
	}
	f, err := os.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := linearize.ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	rounds, clientOps := 0, map[int]int{}
	for _, o := range saved.History.Ops {
		rounds = max(rounds, o.Round+1)
		if !o.Barrier {
			clientOps[o.Round]++
		}
	}
	for k := range rounds - 1 { // the last may have met the end of the run
		if clientOps[k] == 0 {
			t.Errorf("round %d of %d holds its barrier alone", k, rounds)
		}
	}
	t.Logf("%d rounds of up to %v; %s", rounds, res.Consistency.Round, res.Detail)
}
