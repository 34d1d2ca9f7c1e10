// Package suite runs checks: the Check type (a named rule and the
// function that judges it), the Checker a check runs with (it sends
// requests and records what failed, discovers pets, and puts back every
// quantity the check changed), and the Runner that selects the checks of
// a run, runs each one and says what to read first (Headlines).
//
// It knows no rule of the contract: the checks are package
// internal/checks's and package internal/consistency's, and the root
// package assembles them into the run's registry. It reads the run's
// configuration as Settings, conformancetest.Config converted with a Go
// conversion (see Config).
package suite
