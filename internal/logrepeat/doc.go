// Package logrepeat keeps a failure that repeats from filling the log:
// its first occurrence is logged at its own level, and the repeats are
// held back and counted until an interval has passed, when one is logged
// again with the count of those held back. A reader of the log still sees
// that the failure goes on, and how often, in one line a minute.
//
// The API's outage warnings, go-redis's repeated dial failures and the
// server's retries all use one Gate each, so that the rule ("warn once,
// then quietly count") lives here once. The released modules that use it
// (storage/redis, server) hold a copy generated from this source, its
// tests included, in their own internal/logrepeat (their gen.go;
// internal/release's tests fail when a copy differs): no released module imports another module's internal
// package, which go's version selection could pair with another version.
package logrepeat
