package consistency

import (
	"testing"
	"time"
)

// TestRoundLength: a round is long enough for its clients to send about
// roundOps requests at the latency met, within minRound and maxRound.
func TestRoundLength(t *testing.T) {
	for _, tc := range []struct {
		clients int
		latency time.Duration
		want    time.Duration
	}{
		{8, 0, minRound},
		{8, 2 * time.Millisecond, minRound},                // the loopback: as ever
		{8, 20 * time.Millisecond, 480 * time.Millisecond}, // 192 requests of 20 ms over 8 clients
		{4, 20 * time.Millisecond, 960 * time.Millisecond}, // fewer clients: longer
		{8, 80 * time.Millisecond, maxRound},               // a WAN: the longest
		{256, 80 * time.Millisecond, minRound},             // many clients fill a round fast
		{8, FaultExecLimit, maxRound},                      // a fault's time-outs
	} {
		if got := roundLength(tc.clients, tc.latency); got != tc.want {
			t.Errorf("%d clients at %v: %v, want %v", tc.clients, tc.latency, got, tc.want)
		}
	}
}
