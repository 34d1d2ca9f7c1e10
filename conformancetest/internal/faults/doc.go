// Package faults applies the faults of the consistency run's schedule
// (Config.ConsistencyFaults): a command run with sh -c in a process group
// of its own, which is ended whole at its time limit or when the suite is
// interrupted (Exec: nothing it started outlives it), and the Redis
// faults (a pause of every master, its clients killed, a failover) sent
// over a small RESP2 client of its own.
//
// The client is the repository's small RESP client (internal/resp), not
// a Redis library, because the conformance module depends on porcupine
// only: the suite is a tool a team runs against its staging, and every
// dependency is one more it must trust. The URL is read with the grammar
// of the store's REDIS_URL (internal/redisurl). Both are generated copies
// in this module (conformancetest/internal/resp, …/redisurl), checked
// against their source by the release check. This package finds the
// masters of the three topologies a URL names (one node, Sentinel,
// Cluster) and acts on them.
package faults
