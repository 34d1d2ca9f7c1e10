package redisstore

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsFromURL(t *testing.T) {
	o, err := OptionsFromURL("redis://127.0.0.1:6379/2")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "127.0.0.1:6379" || o.DB != 2 || o.TLSConfig != nil {
		t.Errorf("Addr, DB, TLS = %q, %d, %v", o.Addr, o.DB, o.TLSConfig)
	}
	if !o.ContextTimeoutEnabled || o.DialTimeout != DialTimeout || o.ReadTimeout != ReadTimeout ||
		o.WriteTimeout != WriteTimeout || o.PoolTimeout != PoolTimeout || o.MaxRetries != MaxRetries ||
		o.DialerRetries != DialerRetries || o.DialerRetryTimeout != DialerRetryTimeout ||
		o.MinRetryBackoff != MinRetryBackoff || o.MaxRetryBackoff != MaxRetryBackoff {
		t.Errorf("the documented timeouts are not all set: %+v", o)
	}

	// What the URL sets wins; the rest gets the defaults.
	o, err = OptionsFromURL("rediss://user:pw@redis.example:6380/0?dial_timeout=5s&max_retries=-1")
	if err != nil {
		t.Fatal(err)
	}
	if o.TLSConfig == nil || o.Username != "user" || o.Password != "pw" {
		t.Errorf("rediss:// with credentials: TLS %v, user %q", o.TLSConfig, o.Username)
	}
	if o.DialTimeout != 5*time.Second || o.MaxRetries != -1 || o.ReadTimeout != ReadTimeout {
		t.Errorf("DialTimeout, MaxRetries, ReadTimeout = %v, %d, %v; want 5s, -1 (from the URL) and the default", o.DialTimeout, o.MaxRetries, o.ReadTimeout)
	}

	// A socket on this host.
	o, err = OptionsFromURL("unix:///run/redis/redis.sock?db=3")
	if err != nil {
		t.Fatal(err)
	}
	if o.Network != "unix" || o.Addr != "/run/redis/redis.sock" || o.DB != 3 || o.ReadTimeout != ReadTimeout {
		t.Errorf("unix://: Network, Addr, DB, ReadTimeout = %q, %q, %d, %v", o.Network, o.Addr, o.DB, o.ReadTimeout)
	}
}

func TestOptionsFromURLErrors(t *testing.T) {
	const secret = "s3cr3t-pa55"
	for _, u := range []string{
		"",
		"127.0.0.1:6379",
		"http://127.0.0.1:6379",
		"redis://:" + secret + "@127.0.0.1:notaport/0",
		"redis://user:" + secret + "%zz@127.0.0.1:6379/0",
		"redis://user:" + secret + "@127.0.0.1:6379/notadb",
		"redis://127.0.0.1:6379/0?no_such_option=1",
	} {
		o, err := OptionsFromURL(u)
		if err == nil {
			t.Errorf("OptionsFromURL(%q) = %+v, want an error", u, o)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("OptionsFromURL(%q) error %q shows the password", u, err)
		}
		if !strings.HasPrefix(err.Error(), "redisstore: ") {
			t.Errorf("OptionsFromURL(%q) error %q does not say where it comes from", u, err)
		}
	}
}
