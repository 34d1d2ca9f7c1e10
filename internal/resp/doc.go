// Package resp is a small RESP2 client: one connection to a Redis server,
// over TCP, TLS or a Unix socket, authenticated with a user and password,
// that sends a command and reads its reply (simple strings, errors,
// integers, bulk strings, arrays). It speaks what the repository's tools
// need and nothing more: the conformance suite's faults (CLIENT PAUSE,
// SENTINEL FAILOVER, CLUSTER SLOTS) and the test rigs of internal/redistest.
//
// It is not a Redis library on purpose: the conformance module depends on
// porcupine alone, and the test rigs live in the root module, which uses
// the standard library only. Its source is the root module's
// internal/resp; conformancetest holds a generated copy, tests included
// (internal/release/cmd/copyshared), which the release check compares
// with the source.
package resp
