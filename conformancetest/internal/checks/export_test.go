package checks

// What the tests of package checks_test reach of this package's own.
var (
	// MalformedHeads are the heads security/malformed-head-no-echo sends.
	MalformedHeads = malformedHeads
	// MaxUndeclaredStaleness is how long the default list is waited for
	// without a bound: a test lowers it.
	MaxUndeclaredStaleness = &maxUndeclaredStaleness
)
