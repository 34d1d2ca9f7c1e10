package redisstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestParseURLSingleDefaults(t *testing.T) {
	o, err := optionsFromURL("redis://127.0.0.1:6379/2")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "127.0.0.1:6379" || o.DB != 2 || o.TLSConfig != nil {
		t.Errorf("Addr, DB, TLS = %q, %d, %v", o.Addr, o.DB, o.TLSConfig)
	}
	sameTimeouts(t, "redis://", o.ContextTimeoutEnabled, o.DialTimeout, o.DialerRetryTimeout, o.ReadTimeout, o.WriteTimeout,
		o.PoolTimeout, o.MinRetryBackoff, o.MaxRetryBackoff, o.DialerRetries, o.MaxRetries)

	// What the URL sets wins; the rest gets the defaults.
	o, err = optionsFromURL("rediss://user:pw@redis.example:6380/0?dial_timeout=5s&max_retries=-1")
	if err != nil {
		t.Fatal(err)
	}
	if o.TLSConfig == nil || o.Username != "user" || o.Password != "pw" {
		t.Errorf("rediss:// with credentials: TLS %v, user %q", o.TLSConfig, o.Username)
	}
	if o.DialTimeout != 5*time.Second || o.MaxRetries != -1 || o.ReadTimeout != readTimeout {
		t.Errorf("DialTimeout, MaxRetries, ReadTimeout = %v, %d, %v; want 5s, -1 (from the URL) and the default", o.DialTimeout, o.MaxRetries, o.ReadTimeout)
	}

	// A socket on this host.
	o, err = optionsFromURL("unix:///run/redis/redis.sock?db=3")
	if err != nil {
		t.Fatal(err)
	}
	if o.Network != "unix" || o.Addr != "/run/redis/redis.sock" || o.DB != 3 || o.ReadTimeout != readTimeout {
		t.Errorf("unix://: Network, Addr, DB, ReadTimeout = %q, %q, %d, %v", o.Network, o.Addr, o.DB, o.ReadTimeout)
	}
}

// sameTimeouts checks the store's defaults on any of go-redis's option
// types, given their fields: the values ApplyTimeouts documents.
func sameTimeouts(t *testing.T, what string, ctxTimeout bool, dial, dialRetry, read, write, pool, minB, maxB time.Duration, dialerRetries, maxRetries int) {
	t.Helper()
	if !ctxTimeout || dial != 2*time.Second || dialRetry != 100*time.Millisecond || read != 2*time.Second || write != 2*time.Second ||
		pool != 2*time.Second || minB != 8*time.Millisecond || maxB != 256*time.Millisecond || dialerRetries != 2 || maxRetries != 2 {
		t.Errorf("%s: the store's timeouts are not all set: ContextTimeoutEnabled %v, dial %v (retry %v ×%d), read %v, write %v, pool %v, retries %d (%v..%v)",
			what, ctxTimeout, dial, dialRetry, dialerRetries, read, write, pool, maxRetries, minB, maxB)
	}
}

func TestParseURLTopologies(t *testing.T) {
	for _, tc := range []struct {
		url  string
		kind Topology
		says string // in String()
		addr []string
	}{
		{"redis://127.0.0.1:6379/1", Single, "single node 127.0.0.1:6379, db 1", []string{"127.0.0.1:6379"}},
		{"redis://localhost", Single, "single node localhost:6379, db 0", []string{"localhost:6379"}},
		{"rediss://u:pw@r.example:6380/0", Single, "single node r.example:6380, db 0 (TLS)", []string{"r.example:6380"}},
		{"unix:///tmp/r.sock?db=2", Single, "single node, socket /tmp/r.sock, db 2", []string{"/tmp/r.sock"}},
		{"redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000", Cluster, "cluster, seeds 10.0.0.1:7000 10.0.0.2:7000 10.0.0.3:7000",
			[]string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}},
		{"redis://10.0.0.1:7000?cluster=true", Cluster, "cluster, seeds 10.0.0.1:7000", []string{"10.0.0.1:7000"}},
		{"rediss://u:pw@10.0.0.1:7000/0?cluster=1&dial_timeout=3s", Cluster, "cluster, seeds 10.0.0.1:7000 (TLS)", []string{"10.0.0.1:7000"}},
		{"redis://10.0.0.1:7000?cluster=true&addr=10.0.0.2:7000", Cluster, "cluster, seeds 10.0.0.1:7000 10.0.0.2:7000", []string{"10.0.0.1:7000", "10.0.0.2:7000"}},
		{"redis://s1:26379?master_name=shop&addr=s2:26379&addr=s3:26379", Failover, `sentinel, master "shop" via s1:26379 s2:26379 s3:26379, db 0`,
			[]string{"s1:26379", "s2:26379", "s3:26379"}},
		{"redis://su:spw@s1:26379/3?master_name=shop&password=mpw", Failover, `sentinel, master "shop" via s1:26379, db 3`, []string{"s1:26379"}},
	} {
		c, err := ParseURL(tc.url)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tc.url, err)
			continue
		}
		if c.Topology != tc.kind || c.String() != tc.says {
			t.Errorf("ParseURL(%q) = %s, %q; want %s, %q", tc.url, c.Topology, c, tc.kind, tc.says)
		}
		if strings.Contains(c.String(), "pw") {
			t.Errorf("ParseURL(%q).String() = %q shows a credential", tc.url, c)
		}
		var addrs []string
		switch c.Topology {
		case Single:
			o := c.Single
			addrs = []string{o.Addr}
			sameTimeouts(t, tc.url, o.ContextTimeoutEnabled, o.DialTimeout, o.DialerRetryTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MinRetryBackoff, o.MaxRetryBackoff, o.DialerRetries, o.MaxRetries)
			if c.Cluster != nil || c.Failover != nil {
				t.Errorf("ParseURL(%q): more than one kind of options", tc.url)
			}
		case Cluster:
			o := c.Cluster
			addrs = o.Addrs
			if strings.Contains(tc.url, "dial_timeout=3s") {
				if o.DialTimeout != 3*time.Second {
					t.Errorf("ParseURL(%q): DialTimeout %v, want the URL's 3s", tc.url, o.DialTimeout)
				}
				o.DialTimeout = dialTimeout
			}
			sameTimeouts(t, tc.url, o.ContextTimeoutEnabled, o.DialTimeout, o.DialerRetryTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MinRetryBackoff, o.MaxRetryBackoff, o.DialerRetries, o.MaxRetries)
			if c.Single != nil || c.Failover != nil {
				t.Errorf("ParseURL(%q): more than one kind of options", tc.url)
			}
			if strings.HasPrefix(tc.url, "rediss://u:pw@") && (o.Username != "u" || o.Password != "pw" || o.TLSConfig == nil) {
				t.Errorf("ParseURL(%q): user %q, TLS %v; want the URL's", tc.url, o.Username, o.TLSConfig)
			}
		case Failover:
			o := c.Failover
			addrs = o.SentinelAddrs
			sameTimeouts(t, tc.url, o.ContextTimeoutEnabled, o.DialTimeout, o.DialerRetryTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MinRetryBackoff, o.MaxRetryBackoff, o.DialerRetries, o.MaxRetries)
			if o.MasterName != "shop" || o.ReplicaOnly || o.RouteByLatency || o.RouteRandomly {
				t.Errorf("ParseURL(%q): master %q, replica-only %v; want shop, master only", tc.url, o.MasterName, o.ReplicaOnly)
			}
			if strings.Contains(tc.url, "su:spw@") && (o.SentinelUsername != "su" || o.SentinelPassword != "spw" || o.Password != "mpw" || o.DB != 3) {
				t.Errorf("ParseURL(%q): sentinel user %q, master password set %v, db %d; want go-redis's reading: the URL's user is the sentinels', password= the master's", tc.url, o.SentinelUsername, o.Password == "mpw", o.DB)
			}
		}
		if !slices.Equal(addrs, tc.addr) {
			t.Errorf("ParseURL(%q): addresses %q, want %q", tc.url, addrs, tc.addr)
		}
	}
}

// TestParseURLNewClient: each topology gets the client type that serves
// it, built without dialling.
func TestParseURLNewClient(t *testing.T) {
	for u, want := range map[string]string{
		"redis://127.0.0.1:1/0":                      "*redis.Client",
		"redis://127.0.0.1:1?cluster=true":           "*redis.ClusterClient",
		"redis://127.0.0.1:1?master_name=m&addr=h:2": "*redis.Client",
	} {
		c, err := ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		client := c.NewClient()
		got := "*redis.Client"
		if _, ok := client.(*redis.ClusterClient); ok {
			got = "*redis.ClusterClient"
		}
		if got != want {
			t.Errorf("ParseURL(%q).NewClient() is a %s, want %s", u, got, want)
		}
		_ = client.Close()
	}
}

func TestParseURLErrors(t *testing.T) {
	const secret = "s3cr3t-pa55"
	for _, tc := range []struct{ url, says string }{
		{"", "empty"},
		{"127.0.0.1:6379", "must start with"},
		{"http://127.0.0.1:6379", "must start with"},
		{"redis+cluster://127.0.0.1:6379", "must start with"},
		{"redis://:" + secret + "@127.0.0.1:notaport/0", "port"},
		{"redis://user:" + secret + "%zz@127.0.0.1:6379/0", "user or password"},
		// Reserved characters left raw in a password (base64 holds /):
		// however the URL parses, no part of the password is quoted.
		{"rediss://spec:" + secret + "#frag@127.0.0.1:16400/0", "percent-encode"},
		{"rediss://spec:" + secret + "/def@127.0.0.1:16400/0", "percent-encode"},
		{"rediss://spec:1/" + secret + "@127.0.0.1:16400/0", "percent-encode"},
		{"rediss://spec:1?" + secret + "@127.0.0.1:16400/0", "percent-encode"},
		{"rediss://spec:p@" + secret + "/w:rd#x@127.0.0.1:16400/0", "percent-encode"},
		{"rediss://spec:" + secret + "?x@127.0.0.1:16400/0", "percent-encode"},
		{"redis://user:" + secret + "@127.0.0.1:6379/notadb", "notadb"},
		{"redis://127.0.0.1:6379/0?no_such_option=1", "no_such_option"},
		{"redis://127.0.0.1:99999/0", `port "99999"`},
		// The comma form a user might guess yields no broken address.
		{"redis://a:7101,b:7102,c:7103/0", "separated by commas"},
		{"redis://a:7101?addr=b", `addr="b"`},
		{"redis://a:7101?addr=b:x", `addr="b:x"`},
		{"redis://a:7101?addr=:7102", `addr=":7102"`},
		{"redis://a:7101?addr=b:7102&no_such_option=1", "no_such_option"},
		// A misspelt parameter gets the right one suggested.
		{"redis://s:26379?master-name=m", `unknown parameter "master-name"; did you mean master_name?`},
		{"redis://s:26379?master_name=m&addr=s2:1&pasword=x", "did you mean password?"},
		{"redis://a:1?dial-timeout=1s", "did you mean dial_timeout?"},
		{"redis://a:1?Cluster=true", "did you mean cluster?"},
		{"redis://a:1?frobnicate=1", "the parameters are go-redis's"},
		{"redis://a:7101?cluster=yes", "cluster="},
		{"redis://a:7101?cluster=true&cluster=true", "cluster is given more than once"},
		{"redis://a:7101?cluster=false&addr=b:7102", "cluster=false"},
		{"redis://a:7101/2?cluster=true", "database 0 only"},
		{"redis://a:7101?cluster=true&db=2", "parameter db"},
		{"redis://a:7101?cluster=true&read_only=true", "parameter read_only"},
		{"redis://a:7101?cluster=true&route_randomly=true", "parameter route_randomly"},
		{"redis://a:7101?addr=b:7102&route_by_latency=true", "parameter route_by_latency"},
		{"redis://s:26379?master_name=", "master_name is empty"},
		{"redis://s:26379?master_name=m&cluster=true", "contradict"},
		{"redis://s:26379?master_name=m&replica_only=true", "parameter replica_only"},
		{"redis://s:26379?master_name=m&route_by_latency=true", "parameter route_by_latency"},
		{"redis://s:26379?master_name=m&route_randomly=true", "parameter route_randomly"},
		{"redis://s:26379?master_name=m&no_such_option=1", "no_such_option"},
		{"redis://s:26379/x?master_name=m", "database"},
		{"redis://s:26379?master_name=m&password=" + secret + "&no_such_option=1", "no_such_option"},
		{"unix:///tmp/r.sock?addr=b:1", "parameter addr does not go with unix://"},
		{"unix:///tmp/r.sock?cluster=true", "parameter cluster does not go with unix://"},
		{"unix:///tmp/r.sock?master_name=m", "parameter master_name does not go with unix://"},
	} {
		c, err := ParseURL(tc.url)
		if err == nil {
			t.Errorf("ParseURL(%q) = %s, want an error", tc.url, c)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, secret) {
			t.Errorf("ParseURL(%q) error %q shows the password", tc.url, msg)
		}
		if !strings.HasPrefix(msg, "redisstore: invalid Redis URL: ") {
			t.Errorf("ParseURL(%q) error %q does not say where it comes from", tc.url, msg)
		}
		if !strings.Contains(msg, tc.says) {
			t.Errorf("ParseURL(%q) error %q does not say %q", tc.url, msg, tc.says)
		}
	}
}

// TestApplyTimeouts: one function for go-redis's three option types sets
// the store's values where they are zero, keeps the ones given, and
// turns CLIENT SETINFO off (which ACLRule cannot grant on every Redis
// version).
func TestApplyTimeouts(t *testing.T) {
	o := &redis.Options{ReadTimeout: time.Second}
	ApplyTimeouts(o)
	sameTimeouts(t, "Options", o.ContextTimeoutEnabled, o.DialTimeout, o.DialerRetryTimeout, 2*time.Second, o.WriteTimeout, o.PoolTimeout,
		o.MinRetryBackoff, o.MaxRetryBackoff, o.DialerRetries, o.MaxRetries)
	if o.ReadTimeout != time.Second || !o.DisableIdentity {
		t.Errorf("Options: ReadTimeout %v (want the 1s given), DisableIdentity %v", o.ReadTimeout, o.DisableIdentity)
	}
	co := &redis.ClusterOptions{}
	ApplyTimeouts(co)
	sameTimeouts(t, "ClusterOptions", co.ContextTimeoutEnabled, co.DialTimeout, co.DialerRetryTimeout, co.ReadTimeout, co.WriteTimeout, co.PoolTimeout,
		co.MinRetryBackoff, co.MaxRetryBackoff, co.DialerRetries, co.MaxRetries)
	fo := &redis.FailoverOptions{}
	ApplyTimeouts(fo)
	sameTimeouts(t, "FailoverOptions", fo.ContextTimeoutEnabled, fo.DialTimeout, fo.DialerRetryTimeout, fo.ReadTimeout, fo.WriteTimeout, fo.PoolTimeout,
		fo.MinRetryBackoff, fo.MaxRetryBackoff, fo.DialerRetries, fo.MaxRetries)
	if !co.DisableIdentity || !fo.DisableIdentity {
		t.Errorf("DisableIdentity: Cluster %v, Failover %v; want both on", co.DisableIdentity, fo.DisableIdentity)
	}
}
