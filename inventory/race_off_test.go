//go:build !race

package inventory_test

const raceEnabled = false
