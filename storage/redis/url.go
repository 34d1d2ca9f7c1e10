package redisstore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The client settings ApplyTimeouts gives a go-redis Options where it
// leaves them unset. go-redis's own defaults have changed between minor
// versions, so the store does not rely on them.
//
// With ContextTimeoutEnabled, a call's context deadline (the API's store
// timeout, 2 s in the examples) bounds every socket read and write; the
// read and write timeouts below only bound calls whose context has no
// deadline.
const (
	// DialTimeout bounds one attempt to open a connection (TCP and TLS).
	DialTimeout = 2 * time.Second
	// DialerRetries is how many times a connection is dialled before the
	// call fails; DialerRetryTimeout is the pause between two attempts.
	DialerRetries      = 2
	DialerRetryTimeout = 100 * time.Millisecond
	// ReadTimeout and WriteTimeout bound one socket read or write.
	ReadTimeout  = 2 * time.Second
	WriteTimeout = 2 * time.Second
	// PoolTimeout bounds the wait for a free connection when all of the
	// pool's are busy.
	PoolTimeout = 2 * time.Second
	// MaxRetries is how many times go-redis retries a command after a
	// network error or a LOADING/READONLY-style reply, with a backoff
	// between MinRetryBackoff and MaxRetryBackoff. Every write of the store
	// is idempotent, so a retry cannot apply a change twice.
	MaxRetries      = 2
	MinRetryBackoff = 8 * time.Millisecond
	MaxRetryBackoff = 256 * time.Millisecond
)

// ApplyTimeouts sets, in o, each of the settings above that is still zero,
// and turns ContextTimeoutEnabled on so that every call honours its
// context's deadline. Use it when you build the go-redis options yourself;
// OptionsFromURL calls it.
func ApplyTimeouts(o *redis.Options) {
	o.ContextTimeoutEnabled = true
	setDur := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	setDur(&o.DialTimeout, DialTimeout)
	setDur(&o.DialerRetryTimeout, DialerRetryTimeout)
	setDur(&o.ReadTimeout, ReadTimeout)
	setDur(&o.WriteTimeout, WriteTimeout)
	setDur(&o.PoolTimeout, PoolTimeout)
	setDur(&o.MinRetryBackoff, MinRetryBackoff)
	setDur(&o.MaxRetryBackoff, MaxRetryBackoff)
	if o.DialerRetries == 0 {
		o.DialerRetries = DialerRetries
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = MaxRetries
	}
}

// OptionsFromURL parses a redis:// or rediss:// (TLS) URL, or a unix://
// URL of a Redis socket on this host, as redis.ParseURL does
// (redis://user:password@host:port/db, unix:///path/to/redis.sock?db=0,
// with optional query parameters such as dial_timeout=1s), then applies
// ApplyTimeouts to what the URL leaves unset. Its errors never contain the
// URL's password.
//
// For Sentinel or Cluster, build a redis.UniversalClient yourself, with
// the same timeouts and ContextTimeoutEnabled, and pass it to New.
func OptionsFromURL(rawURL string) (*redis.Options, error) {
	if rawURL == "" {
		return nil, errors.New("redisstore: the Redis URL is empty; want redis://host:port/db or rediss://…")
	}
	scheme, _, _ := strings.Cut(rawURL, "://")
	if scheme != "redis" && scheme != "rediss" && scheme != "unix" {
		return nil, errors.New("redisstore: the Redis URL must start with redis://, rediss:// or unix://")
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		// url.Parse errors quote the whole URL: report the error of the
		// same URL with its user information replaced instead.
		safe := redact(rawURL)
		if _, err := redis.ParseURL(safe); err != nil {
			return nil, fmt.Errorf("redisstore: invalid Redis URL: %w", err)
		}
		return nil, errors.New("redisstore: invalid Redis URL: its user or password part is not valid (percent-encode reserved characters)")
	}
	ApplyTimeouts(o)
	return o, nil
}

// userinfo returns the user:password@ part of a URL, or "".
func userinfo(rawURL string) string {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		return rest[:i+1]
	}
	return ""
}

// redact returns rawURL with its user information replaced.
func redact(rawURL string) string {
	if ui := userinfo(rawURL); ui != "" {
		return strings.Replace(rawURL, ui, "xxxxx@", 1)
	}
	return rawURL
}
