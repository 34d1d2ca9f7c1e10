// Package redistest starts real Redis topologies for tests: single
// redis-server nodes, a 6-node Redis Cluster (3 masters, 3 replicas) and a
// Sentinel set (1 master, 2 replicas, 3 sentinels, quorum 2), with helpers
// to find the master that owns a key, kill a node with SIGKILL and wait for
// a replica to be promoted, and a delaying TCP proxy that makes
// replication lag on purpose. Each topology can speak TLS (TLSFiles) and
// run with the default user off (DefaultUserOff): the harness, replication,
// redis-cli and the sentinels then speak as AdminUser, a test adds its
// own users on every node (SetUser) and reads what they were refused
// (Node.ACLLog, ACLLogs).
//
// Every process runs on free loopback ports, in a directory of its own
// under t.TempDir(), and is killed by t.Cleanup whether the test passed or
// not. Nothing waits a fixed time: every wait polls the state it needs
// until a deadline, and a failed wait reports the logs of the processes
// involved. Start-up is tuned for a 2-core CI machine: a Cluster is healthy
// in about 2 s, a Sentinel set in about 3 s, and a master kill is followed
// by a promotion in a few seconds (small cluster-node-timeout and
// down-after-milliseconds).
//
// The package uses the standard library only (it talks RESP itself and
// runs redis-cli only for `--cluster create`), so that it can live in the
// root module and serve the tests of every module. Tests that need it
// call Require, which skips them, saying how to install Redis, when
// redis-server is not on PATH.
package redistest
