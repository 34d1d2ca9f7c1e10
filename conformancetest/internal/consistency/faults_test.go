package consistency_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/redisproc"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// downWhile answers 503 to every request while the file down exists:
// an outage that an exec fault starts and ends. Once it has answered
// three updates so, it creates the file seen, which the fault waits for:
// the outage lasts until the clients have met it, however slow the
// machine.
func downWhile(down, seen string, h http.Handler) http.Handler {
	var mu sync.Mutex
	refused := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(down); err == nil {
			if r.Method == http.MethodPatch {
				mu.Lock()
				if refused++; refused == 3 {
					os.WriteFile(seen, nil, 0o600)
				}
				mu.Unlock()
			}
			refserver.Error(w, http.StatusServiceUnavailable, "unavailable", "down")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestFaultScheduleCost: an exec fault that takes the reference server
// down until the clients have met the outage shows in the report with
// its window, its 503s and its updates of unknown outcome, the history
// saves it, and a replay shows it again. It waits for states (the
// outage seen), never for a time.
func TestFaultScheduleCost(t *testing.T) {
	dir := t.TempDir()
	down, seen := filepath.Join(dir, "down"), filepath.Join(dir, "seen")
	rs := &refserver.Server{}
	rs.Seed()
	srv := httptest.NewServer(slowly(downWhile(down, seen, rs)))
	t.Cleanup(srv.Close)
	hist := filepath.Join(dir, "history.json")
	fault := "100ms exec touch " + down + " && while [ ! -e " + seen + " ]; do sleep 0.01; done && rm " + down + " && echo back up"
	cfg := conformancetest.Config{BaseURL: srv.URL + "/v1", APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second,
		ConsistencyClients: 4, ConsistencyHistory: hist}
	f, err := conformancetest.ParseFault(fault)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConsistencyFaults = []conformancetest.Fault{f}
	rep, err := conformancetest.RunChecks(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Pass || res.Consistency == nil || len(res.Consistency.Faults) != 1 {
		t.Fatalf("%s %v %+v", res.Outcome, res.Failures, res.Consistency)
	}
	fr := res.Consistency.Faults[0]
	t.Log(fr.Line())
	switch {
	case fr.Fault.Fault != fault || fr.Kind != conformancetest.FaultExec || fr.OffsetNs != int64(100*time.Millisecond):
		t.Errorf("fault %q kind %q offset %v", fr.Fault.Fault, fr.Kind, fr.OffsetNs)
	case fr.AppliedNs < fr.OffsetNs || fr.EndedNs == nil || *fr.EndedNs <= fr.AppliedNs:
		t.Errorf("applied at %v, ended at %v: want at its offset or after, and ended after", fr.AppliedNs, fr.EndedNs)
	case fr.ExitStatus == nil || *fr.ExitStatus != 0 || fr.Output != "back up":
		t.Errorf("exit status %v, output %q", fr.ExitStatus, fr.Output)
	case fr.Window <= 0 || int64(fr.WindowFrom) > *fr.EndedNs || int64(fr.WindowTo) < fr.AppliedNs:
		t.Errorf("window %v (%v to %v): want one around the outage", fr.Window, fr.WindowFrom, fr.WindowTo)
	case fr.Answers["503"] < 3 || fr.Unknown < 3:
		t.Errorf("answers %v, %d unknown: want the outage's 503s, and its updates of unknown outcome", fr.Answers, fr.Unknown)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil || !strings.Contains(text.String(), `fault "`+fault+`": exec applied at`) {
		t.Errorf("the text report has no line for the fault: %v\n%s", err, text.String())
	}
	for name, write := range map[string]func(io.Writer) error{"JUnit": rep.WriteJUnit, "HTML": rep.WriteHTML} {
		var b bytes.Buffer
		if err := write(&b); err != nil || !strings.Contains(b.String(), "exec applied at "+fmt.Sprintf("%.3fs", time.Duration(fr.AppliedNs).Seconds())) {
			t.Errorf("the %s report has no line for the fault: %v", name, err)
		}
	}
	js, _ := json.Marshal(rep)
	for _, member := range []string{`"faults":[{"fault":`, `"windowNs":`, `"answers":{"503":`, `"listsSent":`, `"refusedUpdates":0`} {
		if !bytes.Contains(js, []byte(member)) {
			t.Errorf("the JSON report's fault has no %s: %s", member, js)
		}
	}
	// Saved, and shown again.
	again, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: hist})
	if err != nil {
		t.Fatal(err)
	}
	rres, _ := again.Result("consistency/linearizable")
	if rres.Consistency == nil || len(rres.Consistency.Faults) != 1 || rres.Consistency.Faults[0].Line() != fr.Line() {
		t.Errorf("replayed: %+v, want the fault's line %q", rres.Consistency, fr.Line())
	}
}

// TestFaultFollowed: a failure says which fault it followed.
func TestFaultFollowed(t *testing.T) {
	base := (&refserver.Server{LostUpdate: true}).Start(t)
	pic := filepath.Join(t.TempDir(), "history.html")
	// A fault that lasts the whole run: its band is in every piece the
	// picture shows.
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second,
		ConsistencyHTML: pic, ConsistencyFaults: []conformancetest.Fault{{Offset: 0, Kind: conformancetest.FaultExec, Args: []string{"sleep 1.2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Fail || !strings.Contains(res.Failures[0].Problem, `(after the fault "0s exec sleep 1.2", applied at 0.0`) {
		t.Fatalf("%s: %v", res.Outcome, res.Failures)
	}
	if b, err := os.ReadFile(pic); err != nil || !strings.Contains(string(b), `0s exec sleep 1.2`) {
		t.Errorf("the picture has no band for the fault: %v", err)
	}
	if f := res.Failures[0]; f.AfterFault != "0s exec sleep 1.2" {
		t.Errorf("AfterFault %q", f.AfterFault)
	}
}

// TestFaultCannotBeApplied: a command that exits other than 0, a Redis
// that refuses the password: the run stops with conformancetest.ErrFault naming the
// fault and why, the password nowhere.
func TestFaultCannotBeApplied(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	run := func(redisURL string, f conformancetest.Fault) error {
		_, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second,
			ConsistencyFaults: []conformancetest.Fault{f}, ConsistencyRedis: redisURL})
		return err
	}
	err := run("", conformancetest.Fault{Offset: 100 * time.Millisecond, Kind: conformancetest.FaultExec, Args: []string{"echo no such pod; exit 3"}})
	if !errors.Is(err, conformancetest.ErrFault) || !strings.Contains(err.Error(), `fault "100ms exec echo no such pod; exit 3"`) ||
		!strings.Contains(err.Error(), "status 3") || !strings.Contains(err.Error(), "no such pod") {
		t.Errorf("exec exit 3: %v", err)
	}
	addr := redisproc.Start(t, "--requirepass", "right-password-123")
	err = run("redis://:wrong-password-456@"+addr+"/0", conformancetest.Fault{Offset: 500 * time.Millisecond, Kind: conformancetest.FaultRedisPause, Args: []string{"1s"}})
	if !errors.Is(err, conformancetest.ErrFault) || !strings.Contains(err.Error(), `fault "500ms redis-pause 1s"`) || !strings.Contains(err.Error(), "refused") ||
		strings.Contains(err.Error(), "password-") {
		t.Errorf("a refused password: %v", err)
	}
	err = run("redis://:right-password-123@"+addr+"/0", conformancetest.Fault{Offset: 500 * time.Millisecond, Kind: conformancetest.FaultRedisFailover})
	if !errors.Is(err, conformancetest.ErrFault) || !strings.Contains(err.Error(), "needs Sentinel") || strings.Contains(err.Error(), "password-") {
		t.Errorf("a failover of one node: %v", err)
	}
	// The same Redis with its password: applied, and in the report.
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: time.Second,
		ConsistencyFaults: []conformancetest.Fault{{Offset: 300 * time.Millisecond, Kind: conformancetest.FaultRedisPause, Args: []string{"100ms"}},
			{Offset: 600 * time.Millisecond, Kind: conformancetest.FaultRedisKillClients}},
		ConsistencyRedis: "redis://:right-password-123@" + addr})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if c := res.Consistency; c == nil || len(c.Faults) != 2 || !strings.Contains(c.Faults[0].Note, "paused "+addr) || c.Faults[1].Kind != conformancetest.FaultRedisKillClients {
		t.Fatalf("%+v", res.Consistency)
	}
}
