package proctest

import "testing"

// TestLong: only PETINVENTORY_LONG=1 turns the long runs on; any other
// value, or none, skips a test that calls Long before it does anything.
func TestLong(t *testing.T) {
	for _, v := range []string{"", "0", "true", "yes", "1"} {
		t.Run(LongEnv+"="+v, func(t *testing.T) {
			t.Setenv(LongEnv, v)
			want := v == "1"
			if got := LongRuns(); got != want {
				t.Errorf("LongRuns() = %v, want %v", got, want)
			}
			ran := false
			var skipped bool
			t.Run("gated", func(t *testing.T) {
				defer func() { skipped = t.Skipped() }()
				Long(t)
				ran = true
			})
			if ran != want || skipped == want {
				t.Errorf("the gated test ran %v, skipped %v; want it to run only with %s=1", ran, skipped, LongEnv)
			}
		})
	}
}
