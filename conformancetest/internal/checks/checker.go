package checks

import (
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// checker is the suite's Checker with the assertions the checks share.
type checker struct{ *suite.Checker }

// run makes f, a check of this package, the Run of a suite.Check.
func run(f func(c checker)) func(*suite.Checker) {
	return func(c *suite.Checker) { f(checker{c}) }
}

// wrongKey is a bearer key that no deployment holds.
const wrongKey = "conformance-wrong-key-5e0c1d2a9f7b4c8e"
