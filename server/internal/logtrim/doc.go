// Package logtrim holds the test that lists an inventory through three
// inventory-server processes on one Redis while one of them reads a backlog
// of the change log and the log is trimmed, deleted or replaced between
// two pages of that read: every list must show every write answered 200
// before it was sent, and every process must end with what Redis holds.
//
// The test builds inventory-server, starts its own redis-server (it skips,
// saying so, when redis-server is not installed) and puts a small proxy
// between the backlog reader and Redis that runs the fault just before the
// second XRANGE of that reader's read, so that the fault lands between two
// pages every time. It has no code outside the test.
package logtrim
