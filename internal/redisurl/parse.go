package redisurl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Topology is the kind of Redis deployment a URL names.
type Topology string

// The topologies, in the words the store and the suite print.
const (
	Single   Topology = "single node"
	Cluster  Topology = "cluster"
	Sentinel Topology = "sentinel"
)

// article names the topology in a sentence: "one node", "a Cluster",
// "Sentinel".
func (t Topology) article() string {
	return formOf(t).String()
}

// URL is what a Redis URL names.
type URL struct {
	Topology Topology
	// Network is "tcp", or "unix" for unix://.
	Network string
	// Addrs are the node's host:port (or its socket path), a Cluster's
	// seeds, or the sentinels, in the URL's order: the host first, then
	// each addr=. A host without a port has Redis's 6379; an empty host is
	// localhost (go-redis's reading).
	Addrs []string
	// MasterName is the master the sentinels watch (Sentinel only).
	MasterName string
	// DB is the database: the path's /N, or db=N (which wins). A Cluster
	// has 0 only.
	DB int
	// TLS: the scheme is rediss://. SkipVerify: skip_verify=true (with
	// rediss:// only): the servers' certificates are not verified.
	TLS, SkipVerify bool
	// User and Password are the data nodes' credentials: the URL's, or in
	// the Sentinel form the username= and password= parameters (the
	// master's and its replicas').
	User, Password string
	// SentinelUser and SentinelPassword are the sentinels' (the URL's in
	// the Sentinel form).
	SentinelUser, SentinelPassword string
	// Params are the tuning parameters given (dial_timeout, pool_size, …),
	// each one of the form's and of its kind, for go-redis to map.
	Params url.Values
}

// ServerName is the name a TLS connection verifies: the host of the
// first address (for Sentinel, the first sentinel's), as go-redis takes it.
func (u *URL) ServerName() string {
	if u.Network == "unix" || len(u.Addrs) == 0 {
		return ""
	}
	host, _, err := net.SplitHostPort(u.Addrs[0])
	if err != nil {
		return u.Addrs[0]
	}
	return host
}

// String describes the URL without its credentials: "cluster, seeds
// 10.0.0.1:7000 10.0.0.2:7000 (TLS)".
func (u *URL) String() string {
	tls := ""
	if u.TLS {
		tls = " (TLS)"
	}
	switch u.Topology {
	case Cluster:
		return "cluster, seeds " + strings.Join(u.Addrs, " ") + tls
	case Sentinel:
		return fmt.Sprintf("sentinel, master %q via %s, db %d%s", u.MasterName, strings.Join(u.Addrs, " "), u.DB, tls)
	}
	if u.Network == "unix" {
		return fmt.Sprintf("single node, socket %s, db %d", u.Addrs[0], u.DB)
	}
	return fmt.Sprintf("single node %s, db %d%s", u.Addrs[0], u.DB, tls)
}

// Parse parses a Redis URL in one of the forms of the package's doc. A
// malformed URL, an unknown parameter, a parameter of another form or
// of the wrong type, one given twice, several hosts in one URL
// (redis://a:1,b:2) or a parameter that would send reads to replicas is
// an error that names what is wrong and quotes no password.
func Parse(raw string) (*URL, error) {
	u, err := parseSyntax(raw)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if err := checkNames(q); err != nil {
		return nil, err
	}
	out := &URL{Network: "tcp", TLS: u.Scheme == "rediss", Params: url.Values{}}
	if out.Topology, err = topologyOf(u.Scheme, q); err != nil {
		return nil, err
	}
	if err := checkTuning(q, out.Topology); err != nil {
		return nil, err
	}
	for k, v := range q {
		if _, ok := param(k); ok {
			out.Params[k] = v
		}
	}
	if err := out.readAddrs(u, q); err != nil {
		return nil, err
	}
	if err := out.readDB(u, q); err != nil {
		return nil, err
	}
	if err := out.readCredentials(u, q); err != nil {
		return nil, err
	}
	out.MasterName = q.Get("master_name")
	if q.Has("skip_verify") {
		if !out.TLS {
			return nil, errors.New("parameter skip_verify goes with rediss:// (TLS) only")
		}
		if out.SkipVerify, err = parseBool(q.Get("skip_verify")); err != nil {
			return nil, fmt.Errorf("parameter skip_verify=%q: %w", q.Get("skip_verify"), err)
		}
	}
	return out, nil
}

// topologyOf returns the topology q names: Sentinel with master_name=,
// a Cluster with cluster=true or addr=, one node otherwise.
func topologyOf(scheme string, q url.Values) (Topology, error) {
	if scheme == "unix" {
		for _, p := range []string{"master_name", "addr", "cluster"} {
			if q.Has(p) {
				return "", fmt.Errorf("parameter %s does not go with unix://, which names one server on this host", p)
			}
		}
		return Single, nil
	}
	named, hasAddrs := q.Has("master_name"), q.Has("addr")
	cluster := false
	if q.Has("cluster") {
		var err error
		if cluster, err = parseBool(q.Get("cluster")); err != nil {
			return "", fmt.Errorf("parameter cluster=%q: want true or false", q.Get("cluster"))
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
		return Sentinel, nil
	case cluster || hasAddrs:
		return Cluster, nil
	}
	return Single, nil
}

// readAddrs reads the host (or the socket path) and the addr= parameters.
func (out *URL) readAddrs(u *url.URL, q url.Values) error {
	if u.Scheme == "unix" {
		if strings.TrimSpace(u.Path) == "" {
			return errors.New("unix:// names no socket path; want unix:///path/to/redis.sock")
		}
		out.Network, out.Addrs = "unix", []string{u.Path}
		return nil
	}
	if strings.Contains(u.Host, ",") {
		return fmt.Errorf("host %q names several addresses separated by commas; for a Cluster write redis://host1:port1?addr=host2:port2&addr=host3:port3, for Sentinel redis://sentinel1:port?master_name=NAME&addr=sentinel2:port", u.Host)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	if err := checkPort(port); err != nil {
		return fmt.Errorf("address %q: %w", u.Host, err)
	}
	out.Addrs = []string{net.JoinHostPort(host, port)}
	for _, a := range q["addr"] {
		h, p, err := net.SplitHostPort(a)
		switch {
		case err != nil:
			err = errors.New("want host:port")
		case h == "":
			err = errors.New("the host is empty; want host:port")
		default:
			err = checkPort(p)
		}
		if err != nil {
			return fmt.Errorf("parameter addr=%q: %w", a, err)
		}
		out.Addrs = append(out.Addrs, net.JoinHostPort(h, p))
	}
	return nil
}

// checkPort checks a port number.
func checkPort(p string) error {
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number in 1..65535", p)
	}
	return nil
}

// readDB reads the database: the path's /N, then db=N.
func (out *URL) readDB(u *url.URL, q url.Values) error {
	path := ""
	if u.Scheme != "unix" {
		path = strings.Trim(u.Path, "/")
	}
	if out.Topology == Cluster {
		switch {
		case path != "" && path != "0":
			return fmt.Errorf("path %q: a Cluster has database 0 only", u.Path)
		case q.Has("db"):
			return errors.New("parameter db: a Cluster has database 0 only")
		}
		return nil
	}
	var err error
	if path != "" {
		if strings.Contains(path, "/") {
			return fmt.Errorf("path %q: want /N, the database number", u.Path)
		}
		if out.DB, err = database(path); err != nil {
			return fmt.Errorf("database %q in the path: %w", path, err)
		}
	}
	if q.Has("db") {
		if out.DB, err = database(q.Get("db")); err != nil {
			return fmt.Errorf("parameter db=%q: %w", q.Get("db"), err)
		}
	}
	return nil
}

func database(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, errors.New("want a database number, 0 or more")
	}
	return n, nil
}

// readCredentials reads the user information and, in the Sentinel form,
// username= and password=.
func (out *URL) readCredentials(u *url.URL, q url.Values) error {
	user, password := u.User.Username(), ""
	if p, ok := u.User.Password(); ok {
		password = p
	}
	if out.Topology != Sentinel {
		if q.Has("username") || q.Has("password") {
			return errors.New("parameters username= and password= are the master's credentials in the Sentinel form (with master_name=); " +
				"for one node or a Cluster, give them in the URL: redis://user:password@host:port")
		}
		out.User, out.Password = user, password
		return nil
	}
	out.SentinelUser, out.SentinelPassword = user, password
	out.User, out.Password = q.Get("username"), q.Get("password")
	return nil
}
