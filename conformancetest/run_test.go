package conformancetest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// runFaultChild marks the child process of TestRunFailsOnAFault.
const runFaultChild = "CONFORMANCETEST_RUN_FAULT_CHILD"

// TestRunFailsOnAFault: Run(t) fails the test when a fault of the
// schedule cannot be applied: a run whose harness broke is never a
// pass. Run is called in a child process (this test binary again), whose
// test must fail naming the fault and ErrFault.
func TestRunFailsOnAFault(t *testing.T) {
	if os.Getenv(runFaultChild) == "1" {
		base := (&refserver.Server{}).Start(t)
		conformancetest.Run(t, conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", Consistency: time.Second,
			ConsistencyFaults: []conformancetest.Fault{{Offset: 100 * time.Millisecond, Kind: conformancetest.FaultExec, Args: []string{"echo no such pod; exit 3"}}}})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFailsOnAFault$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), runFaultChild+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--- FAIL: TestRunFailsOnAFault") ||
		!strings.Contains(string(out), conformancetest.ErrFault.Error()) || !strings.Contains(string(out), "no such pod") {
		t.Fatalf("Run with a fault that cannot be applied: %v, want its test failed naming the fault:\n%s", err, out)
	}
}
