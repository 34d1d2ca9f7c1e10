//go:build !race

package linearize

// raceDetector is set when the tests run with -race, which slows the
// linearizability checker tenfold or more: timings mean nothing then.
const raceDetector = false
