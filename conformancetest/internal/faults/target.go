package faults

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/redisurl"
	"github.com/petinventory/petinventory/conformancetest/internal/resp"
)

// The topologies a Redis URL names, in the words of the grammar the
// store's redisstore.ParseURL reads too.
const (
	Single   = string(redisurl.Single)
	Sentinel = string(redisurl.Sentinel)
	Cluster  = string(redisurl.Cluster)
)

// Timeout bounds each command and each dial of the faults' connections.
const Timeout = 5 * time.Second

// Target is the Redis the faults act on, parsed from a URL in the forms
// of the store's REDIS_URL. It holds its passwords: String never shows
// them.
type Target struct {
	Topology string
	network  string   // "tcp" or "unix"
	addrs    []string // the node, the Cluster's seeds, or the sentinels
	master   string   // Sentinel: the master's name
	// The data nodes' credentials; for Sentinel, the sentinels' are apart.
	user, password                 string
	sentinelUser, sentinelPassword string
	tls                            *tls.Config
}

// ParseURL parses a Redis URL in the forms the store's REDIS_URL takes,
// with the same grammar (internal/redisurl: one node, rediss://, unix://,
// a Cluster with addr= or cluster=true, a Sentinel-managed master with
// master_name=, the URL's user and password being the sentinels' and
// username= and password= the master's; go-redis's other parameters are
// checked and left alone). caFile, when not empty, holds the PEM CA
// certificates trusted for the servers' TLS certificates (and turns TLS
// on). Errors quote no password.
func ParseURL(raw, caFile string) (*Target, error) {
	g, err := redisurl.Parse(raw)
	if err != nil {
		return nil, err
	}
	t := &Target{Topology: string(g.Topology), network: g.Network, addrs: g.Addrs, master: g.MasterName,
		user: g.User, password: g.Password, sentinelUser: g.SentinelUser, sentinelPassword: g.SentinelPassword}
	if g.TLS || caFile != "" {
		t.tls = &tls.Config{ServerName: g.ServerName(), MinVersion: tls.VersionTLS12, InsecureSkipVerify: g.SkipVerify}
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
		}
		t.tls.RootCAs = pool
	}
	return t, nil
}

// String describes the target without its credentials: "sentinel,
// master "mymaster" via 10.0.0.1:26379 (TLS)".
func (t *Target) String() string {
	s := ""
	switch t.Topology {
	case Sentinel:
		s = fmt.Sprintf("sentinel, master %q via %s", t.master, strings.Join(t.addrs, " "))
	case Cluster:
		s = "cluster, seeds " + strings.Join(t.addrs, " ")
	default:
		s = "single node " + t.addrs[0]
	}
	if t.tls != nil {
		s += " (TLS)"
	}
	return s
}

// Secrets are the passwords of the target, for a caller that scrubs
// them from what it prints (a command's output, an error).
func (t *Target) Secrets() []string {
	var out []string
	for _, p := range []string{t.password, t.sentinelPassword} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// dial connects to a data node (a master or replica) of the target.
func (t *Target) dial(ctx context.Context, addr string) (*Conn, error) {
	return resp.Dial(ctx, t.network, addr, t.tls, t.user, t.password, Timeout)
}

// first returns the first of addrs that answers dial, or the error of
// each.
func first(ctx context.Context, addrs []string, dial func(context.Context, string) (*Conn, error)) (*Conn, error) {
	var errs []error
	for _, a := range addrs {
		c, err := dial(ctx, a)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// dialSentinel connects to the first sentinel that answers.
func (t *Target) dialSentinel(ctx context.Context) (*Conn, error) {
	return first(ctx, t.addrs, func(ctx context.Context, a string) (*Conn, error) {
		return resp.Dial(ctx, t.network, a, t.tls, t.sentinelUser, t.sentinelPassword, Timeout)
	})
}

// SentinelMaster asks the sentinels for the master's address.
func (t *Target) SentinelMaster(ctx context.Context) (string, error) {
	c, err := t.dialSentinel(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return masterAddr(c, t.master)
}

func masterAddr(c *Conn, name string) (string, error) {
	v, err := c.Do("SENTINEL", "get-master-addr-by-name", name)
	if err != nil {
		return "", fmt.Errorf("sentinel %s: SENTINEL get-master-addr-by-name %s: %w", c.Addr(), name, err)
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return "", fmt.Errorf("sentinel %s knows no master named %q", c.Addr(), name)
	}
	host, _ := a[0].(string)
	port, _ := a[1].(string)
	return net.JoinHostPort(host, port), nil
}

// Shard is a range of slots of a Cluster: its master and replicas.
type Shard struct {
	From, To int
	Master   string
	Replicas []string
}

// ClusterShards reads the Cluster's slot ranges (CLUSTER SLOTS) from the
// first seed that answers.
func (t *Target) ClusterShards(ctx context.Context) ([]Shard, error) {
	c, err := first(ctx, t.addrs, t.dial)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.Do("CLUSTER", "SLOTS")
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER SLOTS: %w", c.Addr(), err)
	}
	host, _, _ := net.SplitHostPort(c.Addr())
	return parseSlots(v, host)
}

// parseSlots reads CLUSTER SLOTS' reply; a node announced without an IP
// is at seedHost, as Redis means.
func parseSlots(v any, seedHost string) ([]Shard, error) {
	ranges, ok := v.([]any)
	if !ok || len(ranges) == 0 {
		return nil, errors.New("CLUSTER SLOTS answered no slot range: is it a Cluster?")
	}
	var out []Shard
	for _, r := range ranges {
		e, ok := r.([]any)
		if !ok || len(e) < 3 {
			return nil, errors.New("CLUSTER SLOTS answered a range of an unknown form")
		}
		from, _ := e[0].(int64)
		to, _ := e[1].(int64)
		s := Shard{From: int(from), To: int(to)}
		for k, n := range e[2:] {
			node, ok := n.([]any)
			if !ok || len(node) < 2 {
				return nil, errors.New("CLUSTER SLOTS answered a node of an unknown form")
			}
			ip, _ := node[0].(string)
			port, _ := node[1].(int64)
			if ip == "" || ip == "?" {
				ip = seedHost
			}
			addr := net.JoinHostPort(ip, strconv.FormatInt(port, 10))
			if k == 0 {
				s.Master = addr
			} else {
				s.Replicas = append(s.Replicas, addr)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// shardOf returns the shard that owns slot.
func shardOf(shards []Shard, slot int) (Shard, bool) {
	for _, s := range shards {
		if s.From <= slot && slot <= s.To {
			return s, true
		}
	}
	return Shard{}, false
}

// Masters returns the address of the master (Sentinel, one node), or of
// every master of a Cluster.
func (t *Target) Masters(ctx context.Context) ([]string, error) {
	switch t.Topology {
	case Sentinel:
		m, err := t.SentinelMaster(ctx)
		if err != nil {
			return nil, err
		}
		return []string{m}, nil
	case Cluster:
		shards, err := t.ClusterShards(ctx)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, s := range shards {
			if !slices.Contains(out, s.Master) {
				out = append(out, s.Master)
			}
		}
		return out, nil
	}
	return []string{t.addrs[0]}, nil
}
