// Package hardening holds the tests that treat inventory-server as a user's
// production server would be treated by the internet and by operations:
// hostile requests over real sockets, a slowloris crowd, Redis killed and
// restarted under load (with an fsync-always append-only file, counting
// every acknowledged write), and SIGTERM while requests are in flight.
//
// The tests build inventory-server, start their own redis-server processes on
// free loopback ports (they skip, saying so, when redis-server is not
// installed) and check both -framework gin and -framework fiber. They have
// no code outside the tests.
package hardening
