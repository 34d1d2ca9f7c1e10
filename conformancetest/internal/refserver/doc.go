// Package refserver is the tests' reference implementation of the
// inventory API: a small server of the contract's list, update, method,
// caching and compression rules, with knobs that break one rule each,
// for the suite's checks to be proved against (each check passes the
// correct server and fails the broken one it is about). It is not the
// library: the suite must judge any implementation, and its tests run in
// this module without the repository.
//
// Tests only: no check or runner imports it.
package refserver
