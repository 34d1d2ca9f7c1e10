package logrepeat_test

import (
	"fmt"
	"time"

	"github.com/petinventory/petinventory/internal/logrepeat"
)

func ExampleGate() {
	var g logrepeat.Gate
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
