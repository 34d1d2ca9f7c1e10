package redisstore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/petinventory/petinventory/storage/redis/internal/redisurl"
	"github.com/redis/go-redis/v9"
)

// Topology is the kind of Redis deployment a URL names.
type Topology string

// The topologies, each named after the Config field that holds its
// options.
const (
	// Single is one Redis server (redis://, rediss:// or unix://):
	// Config.Single.
	Single Topology = "single node"
	// Cluster is a Redis Cluster, reached through any of its nodes:
	// Config.Cluster.
	Cluster Topology = "cluster"
	// Failover is a master managed by Redis Sentinel, found by asking the
	// sentinels: Config.Failover.
	Failover Topology = "sentinel"
)

// Config is a parsed Redis URL: the topology it names and the go-redis
// options for it, with the store's timeouts applied. Exactly one of
// Single, Cluster and Failover is set, the one that goes with Topology.
// LoadTLSFiles and UsePasswordFile add a private CA, a client
// certificate and a password read from a file; change other options
// before NewClient if you need to (a dialer).
type Config struct {
	Topology Topology
	Single   *redis.Options
	Cluster  *redis.ClusterOptions
	Failover *redis.FailoverOptions

	passwordFile string // UsePasswordFile's, for the fixes the store logs
}

// NewClient returns a new client for the configuration: a *redis.Client
// for a single node, a *redis.ClusterClient for a Cluster, and a
// *redis.Client from redis.NewFailoverClient for Sentinel. It does not
// dial. Close it when done. Give the store the configuration too
// (New(client, WithClientConfig(c))), so that a fault names the setting
// that fixes it: a Sentinel client does not tell its master's name.
func (c *Config) NewClient() redis.UniversalClient {
	switch c.Topology {
	case Cluster:
		return redis.NewClusterClient(c.Cluster)
	case Failover:
		return redis.NewFailoverClient(c.Failover)
	}
	return redis.NewClient(c.Single)
}

// String describes the topology and its addresses for a log line, for
// example "cluster, seeds 10.0.0.1:7000 10.0.0.2:7000 (TLS)". It never
// shows a user name or password.
func (c *Config) String() string {
	tls := ""
	switch c.Topology {
	case Cluster:
		if c.Cluster.TLSConfig != nil {
			tls = " (TLS)"
		}
		return "cluster, seeds " + strings.Join(c.Cluster.Addrs, " ") + tls
	case Failover:
		if c.Failover.TLSConfig != nil {
			tls = " (TLS)"
		}
		return fmt.Sprintf("sentinel, master %q via %s, db %d%s", c.Failover.MasterName,
			strings.Join(c.Failover.SentinelAddrs, " "), c.Failover.DB, tls)
	}
	o := c.Single
	if o.TLSConfig != nil {
		tls = " (TLS)"
	}
	if o.Network == "unix" {
		return fmt.Sprintf("single node, socket %s, db %d", o.Addr, o.DB)
	}
	return fmt.Sprintf("single node %s, db %d%s", o.Addr, o.DB, tls)
}

// ParseURL parses a Redis URL in go-redis's own forms and returns the
// topology it names, with the store's client settings (ApplyTimeouts)
// set where the URL leaves them unset:
//
//   - one node: redis://[user:password@]host:port[/db], rediss://… (TLS),
//     unix:///path/to/redis.sock[?db=N], as redis.ParseURL reads them;
//   - a Cluster: redis://[user:password@]host:port?addr=host2:port2&addr=host3:port3,
//     as redis.ParseClusterURL reads it: every address is a seed, any
//     node of the Cluster will do. With a single seed, say cluster=true:
//     redis://host:port?cluster=true (a redisstore parameter, not
//     go-redis's);
//   - a Sentinel-managed master: redis://[user:password@]sentinel1:port?master_name=NAME&addr=sentinel2:port[/db],
//     as redis.ParseFailoverURL reads it. As in go-redis, the user and
//     password of the URL are the sentinels'; the master's go in the
//     username= and password= parameters.
//
// Other query parameters are go-redis's for the form (dial_timeout=1s,
// pool_size=20, …). A malformed URL, an unknown parameter or one of
// another form, a value of the wrong type, several hosts in one URL
// (redis://a:1,b:2) or a parameter that would send the store's reads to
// replicas (read_only, route_by_latency, route_randomly, replica_only,
// use_disconnected_replicas) is an error that names what is wrong.
// Errors never contain a password. skip_verify=true (with rediss://)
// turns certificate verification off in every form, a Cluster's
// included.
//
// The grammar is the one the conformance suite reads its
// -consistency-redis URL with (the repository's internal/redisurl, of
// which this module holds a copy), so that a deployment's URL means the
// same to both.
func ParseURL(rawURL string) (*Config, error) {
	c, err := parseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redisstore: invalid Redis URL: %w", err)
	}
	return c, nil
}

// parseURL parses rawURL with the grammar, then maps what it names to
// go-redis's options: the addresses, credentials, database and TLS from
// the grammar's reading, the tuning parameters (time-outs, pool sizes) by
// go-redis's own parser of the form. Those are go-redis's fields with
// go-redis's rules (a plain number of seconds, 0 or less turning a time-out
// off), and they follow the go-redis version the store is built with;
// mapping them here would be a copy of go-redis's table to keep in step.
// The grammar checks their names per form and their types, and the
// store's tests check that go-redis reads every one it lets through.
func parseURL(rawURL string) (*Config, error) {
	g, err := redisurl.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	tuning := "redis://localhost?" + g.Params.Encode()
	var tlsConf *tls.Config
	if g.TLS {
		tlsConf = &tls.Config{ServerName: g.ServerName(), MinVersion: tls.VersionTLS12, InsecureSkipVerify: g.SkipVerify}
	}
	switch g.Topology {
	case redisurl.Sentinel:
		o, err := redis.ParseFailoverURL(tuning)
		if err != nil {
			return nil, goRedisError(err)
		}
		o.MasterName, o.SentinelAddrs, o.DB, o.TLSConfig = g.MasterName, g.Addrs, g.DB, tlsConf
		o.SentinelUsername, o.SentinelPassword, o.Username, o.Password = g.SentinelUser, g.SentinelPassword, g.User, g.Password
		ApplyTimeouts(o)
		return &Config{Topology: Failover, Failover: o}, nil
	case redisurl.Cluster:
		o, err := redis.ParseClusterURL(tuning)
		if err != nil {
			return nil, goRedisError(err)
		}
		o.Addrs, o.TLSConfig, o.Username, o.Password = g.Addrs, tlsConf, g.User, g.Password
		ApplyTimeouts(o)
		return &Config{Topology: Cluster, Cluster: o}, nil
	}
	o, err := redis.ParseURL(tuning)
	if err != nil {
		return nil, goRedisError(err)
	}
	o.Network, o.Addr, o.DB, o.TLSConfig, o.Username, o.Password = g.Network, g.Addrs[0], g.DB, tlsConf, g.User, g.Password
	ApplyTimeouts(o)
	return &Config{Topology: Single, Single: o}, nil
}

// goRedisError reports an error of go-redis's URL parsers without the
// secrets it may quote.
func goRedisError(err error) error {
	return errors.New(redisurl.Redact(strings.TrimPrefix(err.Error(), "redis: ")))
}
