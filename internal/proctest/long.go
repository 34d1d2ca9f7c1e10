package proctest

import (
	"os"
	"testing"
)

// LongEnv names the environment variable that turns on the long runs: the
// end-to-end failover histories, soak-like loads and fault schedules that
// take tens of seconds each. `go test work` with no flags skips them, so
// that it fits go test's default 10-minute timeout on a 2-core laptop;
// `.ci/run` sets it, and runs everything.
const LongEnv = "PETINVENTORY_LONG"

// Long skips t unless LongEnv is set to 1. A test calls it first when it
// runs for more than a few seconds on its own.
func Long(t testing.TB) {
	t.Helper()
	if !LongRuns() {
		t.Skipf("a long run: set %s=1 to run it (.ci/run does)", LongEnv)
	}
}

// LongRuns reports whether LongEnv turns the long runs on. A test that
// proves the same property at two sizes (a quick one for every run, the
// full one for CI) picks its size with it; a test that is long whatever
// its size calls Long instead.
func LongRuns() bool {
	return os.Getenv(LongEnv) == "1"
}
