package consistency

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// refusing answers the first updates and strict lists 503 with
// Retry-After: 0, then 200 (an item, or a list of pet 1).
func refusing(updates503, lists503 int) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		refuse := &lists503
		body := `[{"petId":1,"quantity":5,"status":"available"}]`
		if r.Method == http.MethodPatch {
			refuse, body = &updates503, `{"petId":1,"quantity":1000000,"status":"available"}`
		}
		if *refuse > 0 {
			*refuse--
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"code":"unavailable","message":"down","status":503}`))
			return
		}
		w.Write([]byte(body))
	})
}

// awaitWith runs awaitRecovery against h after a fault that ended as the
// run started, with the recovery limit limit, and returns its requests.
func awaitWith(t *testing.T, h http.Handler, limit time.Duration) []linearize.Op {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := suite.Settings{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client(), RequestTimeout: 5 * time.Second, ConsistencyClients: 2, ConsistencyRecovery: limit}
	var ops []linearize.Op
	check := &suite.Check{Name: "await", Run: func(c *suite.Checker) {
		r := &consistencyRun{c: c, cfg: cfg, ctx: context.Background(), bases: []string{srv.URL}, pets: []wire.Item{{ID: 1, Qty: 5}},
			slotOf: map[int64]int{1: 0}, start: time.Now(), next: firstConsistencyQuantity}
		ended := int64(0)
		ops = r.awaitRecovery(nil, []linearize.Fault{{Fault: "0s exec true", Kind: FaultExec, EndedNs: &ended}})
	}}
	if res := suite.NewRunner(cfg, nil).RunCheck(t.Context(), check); res.Outcome != report.Pass {
		t.Fatalf("%s: %v", res.Outcome, res.Failures)
	}
	return ops
}

// TestAwaitRecovery: after the last fault, the run sends an update, then
// a strict list, each alone and again while it is answered 503, until
// both are answered 200; they are the history's, each a round of its
// own, and the history shows the recovery.
func TestAwaitRecovery(t *testing.T) {
	ops := awaitWith(t, refusing(2, 1), time.Minute)
	var got []string
	for i, o := range ops {
		kind := "update"
		if o.Kind == linearize.List {
			kind = "list"
			if !o.Strict || !o.Barrier {
				t.Errorf("request %d: a list neither strict nor a barrier", i)
			}
		}
		got = append(got, kind+" "+linearize.StatusName(o.Status))
		if o.Round != i || o.Client != 2 {
			t.Errorf("request %d: round %d, client %d; want a round of its own, by the client of the barriers", i, o.Round, o.Client)
		}
	}
	if want := "[update 503 update 503 update 200 list 503 list 200]"; fmt.Sprint(got) != want {
		t.Fatalf("%v, want %s", got, want)
	}
	rec := linearize.Recover(&linearize.History{Ops: ops, Faults: []linearize.Fault{{Fault: "f", EndedNs: new(int64)}}})
	if !rec.Recovered() || rec.Update != 2 || rec.List != 4 || rec.After <= 0 {
		t.Errorf("%+v", rec)
	}
}

// TestAwaitRecoveryGivesUp: a deployment that never recovers is asked
// until the limit has passed, and the history shows no recovery.
func TestAwaitRecoveryGivesUp(t *testing.T) {
	ops := awaitWith(t, refusing(1<<30, 0), 600*time.Millisecond)
	rec := linearize.Recover(&linearize.History{Ops: ops, Faults: []linearize.Fault{{Fault: "f", EndedNs: new(int64)}}})
	if len(ops) < 2 || rec.Recovered() || ops[len(ops)-1].Call > int64(600*time.Millisecond) {
		t.Errorf("%d requests, the last sent at %v; recovery %+v: want updates asked again until the limit, no recovery", len(ops), time.Duration(ops[len(ops)-1].Call), rec)
	}
}
