// Package cut holds the tests that cut the Redis connections of two
// inventory-server processes under load (lists and updates, sent at 500
// a second, at least 8 000 of them: 400 a second for 20 s, the run
// lasting longer on a machine too busy to send them in time): every
// client connection of Redis killed every 500 ms (CLIENT KILL TYPE
// normal) for 20 s or more while the conformance suite's
// consistency check runs through both, and the Redis password rotated the
// documented way (docs/OPERATING.md: ACL SETUSER >new, the file replaced,
// <old, CLIENT KILL USER). No list may be answered other than 200; an
// update may be answered 503 only when its connection was cut with its
// EXEC in flight, which the servers count (metric
// inventory_store_updates_cut_after_exec_total).
//
// The tests build inventory-server and inventory-conformance, start their
// own redis-server (they skip, saying so, without one), and write one
// summary line each to the file CUT_SUMMARY names, which CI prints. There
// is no code outside the tests.
package cut
