package inventory

import (
	"log/slog"
	"time"
)

// DefaultMaxBodyBytes is the default limit on an update's request body.
const DefaultMaxBodyBytes = 16 << 10

// DefaultBodyTimeout is how long the API waits, by default, for the whole
// body of an update once it starts reading it: 16 KiB (the default limit)
// in 5 s is 3.2 KB/s, slower than any link a client of this API should be
// on, and a client whose body stalls (a Content-Length that promises bytes
// that never come) holds a connection and a goroutine no longer.
const DefaultBodyTimeout = 5 * time.Second

// Option configures an API built by New.
type Option func(*config)

type config struct {
	keys          []string
	keysSet       bool
	authenticator Authenticator
	maxBodyBytes  int64
	logger        *slog.Logger
	storeTimeout  time.Duration
	bodyTimeout   time.Duration
	observer      Observer
	maxStaleness  time.Duration
	staleIfError  time.Duration
}

// WithAPIKeys sets the API keys that are valid at once; several keys make
// rotation possible (add the new key, move clients, remove the old one).
// Keys are compared in constant time (see NewKeyAuthenticator) and
// never logged. A key must be non-empty printable ASCII without spaces, at
// most 512 bytes.
//
// A later WithAPIKeys replaces the keys an earlier one gave.
//
// There is no default: New fails unless WithAPIKeys or WithAuthenticator is
// given, so the API is never served open by mistake.
func WithAPIKeys(keys ...string) Option {
	return func(c *config) {
		c.keys = append([]string(nil), keys...)
		c.keysSet = true
	}
}

// WithAuthenticator sets who decides whether a bearer key is valid, for
// teams whose keys live elsewhere (a secrets service, a database). It
// replaces WithAPIKeys; giving both is an error. The header is parsed by
// the API first, so the Authenticator sees only the key itself.
func WithAuthenticator(a Authenticator) Option {
	return func(c *config) { c.authenticator = a }
}

// WithMaxBodyBytes sets the largest update body accepted; a larger one is
// answered 413 payload_too_large without being read whole. Default
// DefaultMaxBodyBytes (16 KiB). It must be at least 64.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) { c.maxBodyBytes = n }
}

// WithLogger sets where unexpected errors (logged with detail, including
// panics with their stack) and store outages are logged. Default
// slog.Default(). Keys and Authorization headers are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithStoreTimeout bounds every store call of a request: past d the call is
// abandoned and the client gets 503 unavailable with Retry-After. Default
// 0: only the request's own context bounds it. Set it for a network store
// (the examples use 2s) so that a stalled store cannot hold requests.
func WithStoreTimeout(d time.Duration) Option {
	return func(c *config) { c.storeTimeout = d }
}

// WithBodyTimeout bounds the reading of an update's body: the API sets a
// read deadline d ahead on the connection before it reads the body, and a
// body that has not all arrived by then (a client that stalls, a
// Content-Length larger than what is sent) is answered 408
// request_timeout, on every framework alike. Default DefaultBodyTimeout;
// 0 leaves the body to the server's own timeouts. The deadline replaces
// the server's read deadline (http.Server.ReadTimeout) for the body: set
// the option, not only the server, to bound it. It needs a connection
// whose deadline can be set: net/http's (through
// http.ResponseController), Fiber's with StreamRequestBody.
func WithBodyTimeout(d time.Duration) Option {
	return func(c *config) { c.bodyTimeout = d }
}

// WithMaxStaleness lets a list be up to d old, for readers that prefer
// throughput and a quiet store to the latest state (dashboards, pollers,
// an indexer). A list is then answered from the state the API holds when
// the store read that produced it was sent at most d ago, as this
// process's monotonic clock measures it; otherwise, and for a request
// with Cache-Control: no-cache, it reads the store as without the option.
// While lists keep coming, the API renews the held state in the
// background once it is older than d/2, so that lists do not wait for the
// store and the store sees at most about two list reads per d from this
// process, whatever the list rate; the renewal stops when lists stop.
// When the store stops answering, no list is answered from a state older
// than d: those lists wait for the store as without the option, and get
// 503 unavailable when it does not answer within the store timeout.
//
// A list still shows one instant of the whole inventory, every update
// answered at least d before the list was sent, and nothing never
// written (docs/CONTRACT.md, Consistency). It applies to every store:
// lists read every store the same way. ETag, 304 and gzip are unchanged.
// Default 0: every list shows every update answered before it was sent.
func WithMaxStaleness(d time.Duration) Option {
	return func(c *config) { c.maxStaleness = d }
}

// WithStaleIfError lets a list be answered through a store outage from the
// last state the store confirmed, when that state is at most d old: for
// readers that would rather show a slightly old inventory than an error
// page (a storefront), never for one that decides on stock (an order
// service, which should send Cache-Control: no-cache). d is a whole number
// of seconds, as Age and Cache-Control count it; 0, the default, turns it
// off, and then nothing changes.
//
// When a list cannot be answered fresh because the store is unavailable
// (an error matching ErrUnavailable: a connection refused or cut, the
// store timeout passing, Redis LOADING, a failover, a replica
// acknowledgement shortfall), it is answered 200 from the state the API
// holds (the state of its last successful store read, which with
// redisstore.WithReplicaAcks the replicas held) if that read was sent at
// most d ago, as this process's monotonic clock measures it. Such an
// answer carries Age (whole seconds since that read was sent, RFC 9111
// §5.1) and Cache-Status: petinventory; fwd=stale; fwd-status=503
// (RFC 9211), and the state's own ETag; If-None-Match naming it is
// answered 304 with the same headers. A stale list is never answered:
//
//   - to a request with Cache-Control: no-cache (it gets 503, as without
//     the option);
//   - from a state read more than d ago (503);
//   - for an error built by UnavailableBecause (a store never initialized,
//     or wiped), nor after a store read met one, until a read succeeds:
//     the inventory it held is gone, and showing it would sell stock that
//     no longer exists;
//   - for any error that is not unavailable (a 500 stays a 500), nor once
//     the request's own context is canceled (the client went away).
//
// Updates answer 503 exactly as without the option. Every list answer
// (200 and 304, fresh or stale) carries Cache-Control: private, no-cache,
// stale-if-error=N (RFC 5861), N = d in seconds, so that a client's cache
// keeps the same bound. Observers see each stale answer
// (RequestObservation.Stale and Age). The first stale list of an outage
// is logged at WARN, and the first successful store read after it at INFO:
// one pair of lines per outage, not one per request.
//
// With WithMaxStaleness(b), d must be longer than b: a list within b is
// answered from the held state as that option says, unmarked; past b a
// list asks the store, and only when that fails is it answered stale, up
// to d. docs/CONTRACT.md (Consistency) states the promise.
func WithStaleIfError(d time.Duration) Option {
	return func(c *config) { c.staleIfError = d }
}
