// Package faults applies the faults of the consistency run's schedule
// (Config.ConsistencyFaults): a command run with sh -c in a process group
// of its own, which is ended whole at its time limit or when the suite is
// interrupted (Exec: nothing it started outlives it), and the Redis
// faults (a pause of every master, its clients killed, a failover) sent
// over a small RESP2 client of its own.
//
// The client is here, not a Redis library, because the conformance
// module depends on porcupine only: the suite is a tool a team runs
// against its staging, and every dependency is one more it must trust.
// It speaks what the faults need and nothing more: AUTH, a command and
// its reply (simple strings, errors, integers, bulk strings, arrays),
// over TCP, TLS or a Unix socket, and finds the masters of the three
// topologies a Redis URL names (one node, Sentinel, Cluster).
package faults
