package conformancetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConsistencyPassesReference: the reference server, one copy of the
// inventory under one lock, is linearizable, through two base URLs.
func TestConsistencyPassesReference(t *testing.T) {
	base := newRefServer(t, &refServer{})
	rep, err := RunChecks(t.Context(), Config{BaseURL: base, Replicas: []string{base + "/"}, APIKey: refKey, Run: "^consistency/", Consistency: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != Pass {
		t.Fatalf("%s: %s %v", res.Outcome, res.Reason, res.Failures)
	}
	t.Log(res.Detail)
}

// TestConsistencyCatchesAnotherWrite: an update whose answer is read
// back after its lock is dropped carries another client's write.
func TestConsistencyCatchesAnotherWrite(t *testing.T) {
	base := newRefServer(t, &refServer{lostUpdate: true})
	pic := filepath.Join(t.TempDir(), "history.html")
	rep, err := RunChecks(t.Context(), Config{BaseURL: base, APIKey: refKey, Run: "^consistency/", Consistency: time.Second, ConsistencyHTML: pic})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != Fail || !strings.Contains(res.Failures[0].Problem, "not its own write") {
		t.Fatalf("%s: %s %v", res.Outcome, res.Reason, res.Failures)
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
	base := newRefServer(t, &refServer{})
	rep, err := RunChecks(t.Context(), Config{BaseURL: base, APIKey: refKey, Run: "^consistency/"})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("consistency/linearizable"); res.Outcome != Skip || !strings.Contains(res.Reason, "-consistency DURATION") {
		t.Fatalf("%s: %s", res.Outcome, res.Reason)
	}
}
