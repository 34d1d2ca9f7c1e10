package redisstore

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// The client settings the store gives a go-redis client where they are
// left unset (see ApplyTimeouts). go-redis's own defaults have changed
// between minor versions, so the store does not rely on them.
const (
	dialTimeout        = 2 * time.Second
	dialerRetries      = 2
	dialerRetryTimeout = 100 * time.Millisecond
	readTimeout        = 2 * time.Second
	writeTimeout       = 2 * time.Second
	poolTimeout        = 2 * time.Second
	maxRetries         = 2
	minRetryBackoff    = 8 * time.Millisecond
	maxRetryBackoff    = 256 * time.Millisecond
)

// ClientOptions are go-redis's three option types: one node, a Cluster,
// and a Sentinel-managed master (redis.NewFailoverClient).
type ClientOptions interface {
	*redis.Options | *redis.ClusterOptions | *redis.FailoverOptions
}

// ApplyTimeouts sets, in o (any of go-redis's three option types), each
// of these settings that is still zero, and turns ContextTimeoutEnabled
// on so that every call honours its context's deadline (the API's store
// timeout bounds every socket read and write; the read and write timeouts
// only bound calls whose context has no deadline):
//
//   - DialTimeout 2s: one attempt to open a connection (TCP and TLS);
//   - DialerRetries 2, DialerRetryTimeout 100ms: how many times a
//     connection is dialled before the call fails, and the pause between
//     two attempts;
//   - ReadTimeout 2s, WriteTimeout 2s: one socket read or write;
//   - PoolTimeout 2s: the wait for a free connection when all of the
//     pool's are busy;
//   - MaxRetries 2, MinRetryBackoff 8ms, MaxRetryBackoff 256ms: how many
//     times go-redis sends a command again after a network error or a
//     LOADING/READONLY-style reply, and the backoff between; every write
//     of the store is idempotent, so a retry cannot apply a change twice.
//
// It also sets DisableIdentity: the client does not send CLIENT SETINFO
// when it connects, a command ACLRule cannot grant on every Redis version
// (Redis 7.0 does not know it), so that a user holding exactly that rule
// meets no refusal. For a Cluster the settings apply to every node's
// connections; for Sentinel, to the master's and the sentinels'.
//
// Use it when you build the go-redis options yourself; ParseURL calls it.
func ApplyTimeouts[O ClientOptions](o O) {
	switch o := any(o).(type) {
	case *redis.Options:
		timeouts{&o.DialTimeout, &o.DialerRetryTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout,
			&o.MinRetryBackoff, &o.MaxRetryBackoff, &o.DialerRetries, &o.MaxRetries, &o.ContextTimeoutEnabled, &o.DisableIdentity}.apply()
	case *redis.ClusterOptions:
		timeouts{&o.DialTimeout, &o.DialerRetryTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout,
			&o.MinRetryBackoff, &o.MaxRetryBackoff, &o.DialerRetries, &o.MaxRetries, &o.ContextTimeoutEnabled, &o.DisableIdentity}.apply()
	case *redis.FailoverOptions:
		timeouts{&o.DialTimeout, &o.DialerRetryTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout,
			&o.MinRetryBackoff, &o.MaxRetryBackoff, &o.DialerRetries, &o.MaxRetries, &o.ContextTimeoutEnabled, &o.DisableIdentity}.apply()
	}
}

// timeouts points at the fields ApplyTimeouts sets in one of go-redis's
// option types, which share the names but no interface.
type timeouts struct {
	dial, dialRetry, read, write, pool, minBackoff, maxBackoff *time.Duration
	dialerRetries, maxRetries                                  *int
	contextTimeout, noIdentity                                 *bool
}

func (t timeouts) apply() {
	*t.contextTimeout = true
	*t.noIdentity = true
	setDur := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	setDur(t.dial, dialTimeout)
	setDur(t.dialRetry, dialerRetryTimeout)
	setDur(t.read, readTimeout)
	setDur(t.write, writeTimeout)
	setDur(t.pool, poolTimeout)
	setDur(t.minBackoff, minRetryBackoff)
	setDur(t.maxBackoff, maxRetryBackoff)
	if *t.dialerRetries == 0 {
		*t.dialerRetries = dialerRetries
	}
	if *t.maxRetries == 0 {
		*t.maxRetries = maxRetries
	}
}
