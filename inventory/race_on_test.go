//go:build race

package inventory

// raceEnabled: the race detector changes escape analysis, so allocation
// counts are checked only without it.
const raceEnabled = true
