package inventory

// WaitFor is waitFor, for the external tests of this package.
var WaitFor = waitFor
