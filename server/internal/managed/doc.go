// Package managed holds the tests that run inventory-server against Redis as
// a cloud provider hands it out: a TLS-only port (--port 0 --tls-port N)
// with a private CA, the default user off, an ACL user with a password,
// possibly without some commands, a rotated password, and an eviction
// policy or a memory limit chosen by someone else. Each configuration
// fault of docs/SECURITY.md is tried through the real binary: the answer
// (503 with Retry-After, never 500, 404 or an empty list), the /readyz
// body, one ERROR line with the fix however many requests fail, and the
// recovery, without a restart, once the fault is fixed where it can be.
// And one ACL rule for every topology: a user holding exactly
// redisstore.ACLRule serves on one node, a Cluster and Sentinel, the
// conformance command passes, and no node's ACL LOG records a refusal.
//
// The tests build inventory-server and start their own redis-server
// processes (internal/redistest); they skip, saying so, when redis-server
// is not installed. They have no code outside the tests.
package managed
