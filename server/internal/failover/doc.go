// Package failover holds the tests that run inventory-server, as built, on
// the Redis topologies teams run in production, started for the tests by
// internal/redistest: a 6-node Redis Cluster (3 masters, 3 replicas) and a
// Sentinel-managed master with two replicas and three sentinels.
//
// On each topology they run the inventory-conformance command through the
// server started with the REDIS_URL form of that topology (the Cluster one
// seeded through nodes that do not own the store's slot); check that
// /readyz is not ready when REDIS_URL names a sentinel's port, a replica,
// or a Cluster node that does not own the slot reached as a single node;
// and kill -9 the master that owns the store while sequential writers
// update, measuring the window until every writer succeeds again, the
// statuses seen (only 200 and 503 are allowed) and the acknowledged writes
// lost, without and with replica acknowledgements (-replica-acks 1), with
// replication slowed 50 ms by delaying proxies between masters and
// replicas (and, on Cluster, once without).
// Each failover run prints one summary line, also appended to the file
// named by FAILOVER_SUMMARY (CI prints it).
//
// The tests skip, saying so, when redis-server is not installed. They have
// no code outside the tests.
package failover
