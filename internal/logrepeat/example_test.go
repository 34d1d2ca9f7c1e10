package logrepeat

// The example is in the package itself, not in logrepeat_test, so that
// its copies in other modules (see the package doc) run it unchanged.

import (
	"fmt"
	"time"
)

func ExampleGate() {
	var g Gate
	start := time.Unix(0, 0)
	for i, at := range []time.Duration{0, time.Second, 2 * time.Second, time.Minute} {
		if ok, held := g.Allow("redis: connection refused", start.Add(at)); ok {
			fmt.Printf("occurrence %d: warn (held back before it: %d)\n", i, held)
		} else {
			fmt.Printf("occurrence %d: quiet\n", i)
		}
	}
	// Output:
	// occurrence 0: warn (held back before it: 0)
	// occurrence 1: quiet
	// occurrence 2: quiet
	// occurrence 3: warn (held back before it: 2)
}
