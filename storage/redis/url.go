package redisstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

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
// Other query parameters are go-redis's (dial_timeout=1s,
// pool_size=20, …). A malformed URL, an unknown parameter, several hosts
// in one URL (redis://a:1,b:2) or a parameter that would send the store's
// reads to replicas (read_only, route_by_latency, route_randomly,
// replica_only) is an error that names what is wrong. Errors never
// contain a password.
func ParseURL(rawURL string) (*Config, error) {
	c, err := parseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redisstore: invalid Redis URL: %w", err)
	}
	return c, nil
}

// replicaReads are the go-redis URL parameters that would route reads to
// replicas: the store must read what it wrote, so they are refused.
var replicaReads = []string{"read_only", "route_by_latency", "route_randomly", "replica_only", "use_disconnected_replicas"}

func parseURL(rawURL string) (*Config, error) {
	u, err := parseSyntax(rawURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if err := checkParams(u, q); err != nil {
		return nil, err
	}
	topology, err := topologyOf(q)
	if err != nil {
		return nil, err
	}
	if topology != Single {
		if err := refuse(q, replicaReads); err != nil {
			return nil, err
		}
	}
	q.Del("cluster") // the store's own parameter, which go-redis does not know
	u.RawQuery = q.Encode()
	switch topology {
	case Failover:
		o, err := redis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, goRedisError(err)
		}
		ApplyTimeouts(o)
		return &Config{Topology: Failover, Failover: o}, nil
	case Cluster:
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return nil, fmt.Errorf("path %q: a Cluster has database 0 only", u.Path)
		}
		if q.Has("db") {
			return nil, errors.New("parameter db: a Cluster has database 0 only")
		}
		u.Path = ""
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, goRedisError(err)
		}
		ApplyTimeouts(o)
		return &Config{Topology: Cluster, Cluster: o}, nil
	}
	o, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, goRedisError(err)
	}
	ApplyTimeouts(o)
	return &Config{Topology: Single, Single: o}, nil
}

// parseSyntax parses rawURL as a URL of one of the three schemes, with
// a user part that parses whole and one host; its errors quote no
// secret.
func parseSyntax(rawURL string) (*url.URL, error) {
	if rawURL == "" {
		return nil, errors.New("the URL is empty; want redis://host:port/db, rediss://…, unix:///path/to/socket, or a Cluster or Sentinel form (see ParseURL)")
	}
	scheme, _, ok := strings.Cut(rawURL, "://")
	if !ok || scheme != "redis" && scheme != "rediss" && scheme != "unix" {
		return nil, errors.New("the URL must start with redis://, rediss:// or unix://")
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse errors quote the whole URL: report the error of the
		// same URL with its secrets replaced instead.
		if _, err := url.Parse(redact(rawURL)); err != nil {
			return nil, errors.New(redact(err.Error()))
		}
		return nil, errors.New(reservedInUserinfo)
	}
	// A password with a reserved character that is not percent-encoded
	// can parse as a URL that ends its user part early: the rest of the
	// password lands in the path, query or fragment, where an error would
	// quote it. A Redis URL has no fragment, and no "@" after its host.
	if strings.Contains(rawURL, "#") || strings.Contains(u.Path, "@") {
		return nil, errors.New(reservedInUserinfo)
	}
	for k := range u.Query() {
		if strings.Contains(k, "@") {
			return nil, errors.New(reservedInUserinfo)
		}
	}
	if strings.Contains(u.Host, ",") {
		return nil, fmt.Errorf("host %q names several addresses separated by commas; for a Cluster write redis://host1:port1?addr=host2:port2&addr=host3:port3, for Sentinel redis://sentinel1:port?master_name=NAME&addr=sentinel2:port", u.Host)
	}
	return u, nil
}

// checkParams checks that every parameter of q is known, fits the
// scheme, and that every address (the host, addr=) is host:port.
func checkParams(u *url.URL, q url.Values) error {
	for k := range q {
		if !slices.Contains(knownParams, k) {
			return unknownParam(k)
		}
	}
	if u.Scheme == "unix" {
		for _, p := range []string{"master_name", "addr", "cluster"} {
			if q.Has(p) {
				return fmt.Errorf("parameter %s does not go with unix://, which names one server on this host", p)
			}
		}
	}
	for _, a := range q["addr"] {
		if err := checkAddr(a); err != nil {
			return fmt.Errorf("parameter addr=%q: %w", a, err)
		}
	}
	if u.Host != "" && u.Scheme != "unix" {
		if err := checkAddr(u.Host); err != nil && u.Port() != "" {
			return fmt.Errorf("address %q: %w", u.Host, err)
		}
	}
	return nil
}

// topologyOf returns the topology q names: Sentinel with master_name=,
// a Cluster with cluster=true or addr=, one node otherwise.
func topologyOf(q url.Values) (Topology, error) {
	_, named := q["master_name"]
	_, hasAddrs := q["addr"]
	clusterFlag, hasCluster := q["cluster"]
	cluster := false
	if hasCluster {
		if len(clusterFlag) != 1 {
			return "", errors.New("parameter cluster is given more than once")
		}
		var err error
		if cluster, err = strconv.ParseBool(clusterFlag[0]); err != nil {
			return "", fmt.Errorf("parameter cluster=%q: want true or false", clusterFlag[0])
		}
		if !cluster && hasAddrs && !named {
			return "", errors.New("parameter cluster=false with addr=: addr= names more Cluster seeds (or sentinels, with master_name=)")
		}
	}
	switch {
	case named && cluster:
		return "", errors.New("parameters master_name= (Sentinel) and cluster=true (Cluster) contradict each other")
	case named:
		if q.Get("master_name") == "" {
			return "", errors.New("parameter master_name is empty; it names the master the sentinels watch")
		}
		return Failover, nil
	case cluster || hasAddrs:
		return Cluster, nil
	}
	return Single, nil
}

// knownParams are the query parameters of a Redis URL: go-redis's, of
// any of its three forms, and the store's own cluster.
var knownParams = []string{
	"addr", "client_name", "cluster", "conn_max_idle_time", "conn_max_lifetime", "conn_max_lifetime_jitter",
	"context_timeout_enabled", "db", "dial_timeout", "dialer_retries", "dialer_retry_timeout",
	"failing_timeout_seconds", "idle_timeout", "master_name", "max_active_conns", "max_concurrent_dials",
	"max_conn_age", "max_idle_conns", "max_redirects", "max_retries", "max_retry_backoff", "min_idle_conns",
	"min_retry_backoff", "password", "pipeline_pool_size", "pipeline_read_buffer_size",
	"pipeline_write_buffer_size", "pool_fifo", "pool_size", "pool_timeout", "protocol", "read_only",
	"read_timeout", "replica_only", "route_by_latency", "route_by_latency_tolerance", "route_randomly",
	"skip_verify", "use_disconnected_replicas", "username", "write_timeout",
}

// unknownParam is the error for a query parameter no form knows, with the
// known one it is closest to when it looks like a misspelling of it.
func unknownParam(k string) error {
	best, bestD := "", len(k)/3+2
	norm := strings.ToLower(strings.ReplaceAll(k, "-", "_"))
	for _, p := range knownParams {
		if d := editDistance(norm, p); d < bestD {
			best, bestD = p, d
		}
	}
	if best != "" {
		return fmt.Errorf("unknown parameter %q; did you mean %s?", k, best)
	}
	return fmt.Errorf("unknown parameter %q; the parameters are go-redis's (master_name, addr, username, password, dial_timeout, pool_size, …) and cluster", k)
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// refuse fails when q has one of params.
func refuse(q url.Values, params []string) error {
	for _, p := range params {
		if q.Has(p) {
			return fmt.Errorf("parameter %s: the store reads and writes the master only (it must read what it wrote), so reads cannot go to replicas", p)
		}
	}
	return nil
}

// checkAddr checks a host:port address.
func checkAddr(a string) error {
	h, p, err := net.SplitHostPort(a)
	if err != nil {
		return errors.New("want host:port")
	}
	if h == "" {
		return errors.New("the host is empty; want host:port")
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number in 1..65535", p)
	}
	return nil
}

// goRedisError reports an error of go-redis's URL parsers without the
// secrets it may quote.
func goRedisError(err error) error {
	return errors.New(redact(strings.TrimPrefix(err.Error(), "redis: ")))
}

// reservedInUserinfo is the error of a URL whose user or password part
// does not parse, or parses short; it quotes nothing of the URL.
const reservedInUserinfo = "its user or password part does not parse: percent-encode a reserved character in it " +
	"(/ as %2F, ? as %3F, # as %23, @ as %40, : in the user as %3A), e.g. with url.UserPassword(user, password).String()"

// redact returns s (a URL, or an error quoting one) with the user
// information of the URL and the values of password= parameters replaced.
// The user information ends at the last "@" of the URL (before a quote or
// a space, which end a URL an error quotes), since a password that is not
// percent-encoded may hold "/", "?" or "#": more than the user information
// may be hidden, never less.
func redact(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		end := len(rest)
		if j := strings.IndexAny(rest, "\" "); j >= 0 {
			end = j
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			s = s[:i+3] + "xxxxx" + rest[at:]
		}
	}
	for _, p := range []string{"password=", "sentinel_password="} {
		for from := 0; ; {
			i := strings.Index(s[from:], p)
			if i < 0 {
				break
			}
			start := from + i + len(p)
			end := start
			for end < len(s) && !strings.ContainsRune("&#\" ", rune(s[end])) {
				end++
			}
			s = s[:start] + "xxxxx" + s[end:]
			from = start + len("xxxxx")
		}
	}
	return s
}
