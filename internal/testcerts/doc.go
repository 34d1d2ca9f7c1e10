// Package testcerts makes the certificates of a test's own private
// certificate authority: a CA, a server certificate it signs for
// 127.0.0.1 and localhost, and a client certificate (for mutual TLS), as
// PEM files, with the TLS settings of a client that trusts the CA and the
// redis-server flags that serve them.
//
// Its source is the root module's internal/testcerts, which
// internal/redistest uses; conformancetest, whose tests start a
// redis-server of their own (its module may not import the root module),
// holds a generated copy, tests included (internal/release/cmd/copyshared),
// which the release check compares with the source.
package testcerts
