package redistest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClusterNodeTimeout is the cluster-node-timeout of the clusters
// StartCluster makes: a master unreachable for this long is marked failed
// and its replica takes over, so a promotion takes about twice this.
const ClusterNodeTimeout = 1000 * time.Millisecond

// Cluster is a running Redis Cluster of 3 masters with one replica each.
type Cluster struct {
	Nodes []*Node
	// Proxies, with ClusterOptions.ReplicaLag, are each node's proxies on
	// LagHost: its data port (delaying) and its bus port (not delaying).
	Proxies map[*Node][]*Proxy
	t       testing.TB
}

// ClusterOptions tunes StartClusterWith.
type ClusterOptions struct {
	// ReplicaLag, when positive, makes every replica replicate through a
	// proxy that delays the stream by this much each way, while clients
	// still reach the nodes directly. Each node announces LagHost to the
	// cluster (so replicas and the cluster bus dial LagHost, where
	// proxies listen on the node's own ports) and 127.0.0.1 as the
	// hostname clients are told to use (cluster-preferred-endpoint-type
	// hostname).
	ReplicaLag time.Duration
	// TLS, when set, makes every node TLS-only with these files: clients,
	// replication and the cluster bus all speak TLS (tls-cluster,
	// tls-replication), and the harness does too. It does not go with
	// ReplicaLag.
	TLS *TLSFiles
	// DefaultUserOff turns every node's default user off: clients must
	// authenticate as a user the test adds on every node (SetUser), and
	// the harness, redis-cli and replication speak as AdminUser.
	DefaultUserOff bool
}

// LagHost is the loopback address the nodes of a cluster with replica lag
// announce to each other.
const LagHost = "127.0.0.2"

// StartCluster starts six cluster-enabled redis-servers, joins them with
// `redis-cli --cluster create … --cluster-replicas 1`, and waits until
// every node sees the cluster OK with all 16384 slots served and each of
// the 3 masters has a replica in sync. Every node is killed when the test
// ends.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	return StartClusterWith(t, ClusterOptions{})
}

// StartClusterWith is StartCluster with options.
func StartClusterWith(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	Require(t)
	if opts.TLS != nil && opts.ReplicaLag > 0 {
		t.Fatal("redistest: ClusterOptions: TLS does not go with ReplicaLag")
	}
	start := time.Now()
	c := &Cluster{t: t, Proxies: map[*Node][]*Proxy{}}
	var conf *tls.Config
	if opts.TLS != nil {
		conf = opts.TLS.ClientConfig(t)
	}
	busPorts := map[*Node]int{}
	for i := range 6 {
		var bus int
		n := startNodeAs(t, "cluster-"+strconv.Itoa(i), access{tls: conf, admin: opts.DefaultUserOff}, func(port int, dir string) []string {
			bus = FreePort(t)
			var announce []string
			if opts.ReplicaLag > 0 {
				announce = []string{"--cluster-announce-ip", LagHost,
					"--cluster-announce-hostname", "127.0.0.1", "--cluster-preferred-endpoint-type", "hostname"}
			}
			ports := []string{"--port", strconv.Itoa(port)}
			if opts.TLS != nil {
				ports = append([]string{"--port", "0", "--tls-port", strconv.Itoa(port),
					"--tls-cluster", "yes", "--tls-replication", "yes"}, opts.TLS.ServerArgs()...)
			}
			announce = append(announce, ports...)
			if opts.DefaultUserOff {
				announce = append(announce, aclArgs()...)
			}
			return append(announce, "--bind", "127.0.0.1", "--dir", dir,
				"--cluster-port", strconv.Itoa(bus),
				"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", strconv.Itoa(int(ClusterNodeTimeout/time.Millisecond)),
				// A replica may always take over, however stale: the tests
				// measure what a failover loses, so it must happen.
				"--cluster-replica-validity-factor", "0",
				"--save", "", "--appendonly", "no", "--daemonize", "no",
				// A replica syncs at once, not after the default 5 s that
				// lets several replicas share one diskless transfer.
				"--repl-diskless-sync-delay", "0",
				"--logfile", filepath.Join(dir, "redis.log"))
		})
		busPorts[n] = bus
		c.Nodes = append(c.Nodes, n)
	}
	if opts.ReplicaLag > 0 {
		for _, n := range c.Nodes {
			c.Proxies[n] = []*Proxy{
				StartProxyAt(t, LagHost+":"+strconv.Itoa(n.Port), n.Addr(), opts.ReplicaLag),
				StartProxyAt(t, LagHost+":"+strconv.Itoa(busPorts[n]), "127.0.0.1:"+strconv.Itoa(busPorts[n]), 0),
			}
		}
	}
	args := []string{"--cluster", "create"}
	if opts.DefaultUserOff {
		args = append([]string{"--user", AdminUser, "--pass", AdminPassword, "--no-auth-warning"}, args...)
	}
	if opts.TLS != nil {
		args = append([]string{"--tls", "--cacert", opts.TLS.CA, "--cert", opts.TLS.ClientCert, "--key", opts.TLS.ClientKey}, args...)
	}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	created := time.Since(start)
	if err := Poll(30*time.Second, c.healthy); err != nil {
		c.fail("the cluster did not become healthy: %v", err)
	}
	t.Logf("cluster of 6 nodes healthy in %v (redis-cli --cluster create returned after %v)",
		time.Since(start).Round(time.Millisecond), created.Round(time.Millisecond))
	return c
}

// fail reports the nodes' logs and stops the test.
func (c *Cluster) fail(format string, args ...any) {
	c.t.Helper()
	failWithLogs(c.t, c.Nodes, format, args...)
}

// failWithLogs stops the test with the message and every node's log.
func failWithLogs(t testing.TB, nodes []*Node, format string, args ...any) {
	t.Helper()
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, "\n--- %s (%s) log:\n%s", n.Name, n.Addr(), n.Log())
	}
	t.Fatalf(format+"%s", append(args, b.String())...)
}

// ClusterNode is one line of CLUSTER NODES.
type ClusterNode struct {
	ID, Addr string // Addr is ip:port, without the bus port
	Master   bool
	MasterID string // for a replica
	Failed   bool   // flagged fail or fail?
	Slots    [][2]int
}

// Owns reports whether the node serves slot.
func (n ClusterNode) Owns(slot int) bool {
	for _, r := range n.Slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// Topology returns the cluster as node seen from it (CLUSTER NODES).
func (c *Cluster) Topology(n *Node) ([]ClusterNode, error) {
	text, err := n.DoString("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var nodes []ClusterNode
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		cn := ClusterNode{ID: f[0], Addr: strings.SplitN(f[1], "@", 2)[0], MasterID: f[3]}
		for flag := range strings.SplitSeq(f[2], ",") {
			switch flag {
			case "master":
				cn.Master = true
			case "fail", "fail?":
				cn.Failed = true
			}
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") { // a slot being migrated
				continue
			}
			lo, hi, found := strings.Cut(s, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if found {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("CLUSTER NODES of %s: bad slot range %q", n.Name, s)
			}
			cn.Slots = append(cn.Slots, [2]int{a, b})
		}
		nodes = append(nodes, cn)
	}
	return nodes, nil
}

// healthy: every node says cluster_state:ok with all slots OK and 6 known
// nodes, each of the 3 masters has a replica, and every replica's link to
// its master is up.
func (c *Cluster) healthy() error {
	for _, n := range c.Nodes {
		info, err := n.DoString("CLUSTER", "INFO")
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		for field, want := range map[string]string{"cluster_state": "ok", "cluster_slots_ok": "16384", "cluster_known_nodes": "6", "cluster_size": "3"} {
			if v, _ := infoField(info, field); v != want {
				return fmt.Errorf("%s: %s is %q, want %q", n.Name, field, v, want)
			}
		}
		role, err := n.Info("replication", "role")
		if err != nil {
			return err
		}
		if role == "slave" {
			if link, _ := n.Info("replication", "master_link_status"); link != "up" {
				return fmt.Errorf("%s: replica's master_link_status is %q", n.Name, link)
			}
		}
	}
	topo, err := c.Topology(c.Nodes[0])
	if err != nil {
		return err
	}
	replicas := map[string]int{}
	for _, cn := range topo {
		if cn.Failed {
			return fmt.Errorf("%s is flagged failed", cn.Addr)
		}
		if !cn.Master {
			replicas[cn.MasterID]++
		}
	}
	for _, cn := range topo {
		if cn.Master && replicas[cn.ID] != 1 {
			return fmt.Errorf("master %s has %d replicas, want 1", cn.Addr, replicas[cn.ID])
		}
	}
	return nil
}

// KeySlot returns the hash slot of key (CLUSTER KEYSLOT, so hash tags
// count as Redis counts them).
func (c *Cluster) KeySlot(key string) int {
	c.t.Helper()
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		v, err := n.Do("CLUSTER", "KEYSLOT", key)
		if slot, ok := v.(int64); err == nil && ok {
			return int(slot)
		}
	}
	c.t.Fatalf("no live node answered CLUSTER KEYSLOT %s", key)
	return 0
}

// byAddr returns the node of the harness at addr (by port: with replica
// lag the nodes announce LagHost, not 127.0.0.1).
func (c *Cluster) byAddr(addr string) *Node {
	_, port, _ := strings.Cut(addr, ":")
	for _, n := range c.Nodes {
		if strconv.Itoa(n.Port) == port {
			return n
		}
	}
	return nil
}

// LagInPlace reports an error unless every live replica replicates from
// LagHost, through its master's delaying proxy.
func (c *Cluster) LagInPlace() error {
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		if role, err := n.Info("replication", "role"); err != nil || role != "slave" {
			continue
		}
		if host, err := n.Info("replication", "master_host"); err != nil || host != LagHost {
			return fmt.Errorf("%s replicates from %q (%v), not through a proxy on %s", n.Name, host, err, LagHost)
		}
	}
	return nil
}

// Sever severs the proxies of node (see Proxy.Sever): with replica lag,
// call it as node is killed to lose what was in flight to its replica.
func (c *Cluster) Sever(node *Node) {
	for _, p := range c.Proxies[node] {
		p.Sever()
	}
}

// view returns the topology as the first live node sees it.
func (c *Cluster) view() ([]ClusterNode, error) {
	var last error = errors.New("no node is alive")
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		topo, err := c.Topology(n)
		if err == nil {
			return topo, nil
		}
		last = err
	}
	return nil, last
}

// MasterOf returns the master that serves slot now.
func (c *Cluster) MasterOf(slot int) *Node {
	c.t.Helper()
	topo, err := c.view()
	if err != nil {
		c.t.Fatal(err)
	}
	for _, cn := range topo {
		if cn.Master && !cn.Failed && cn.Owns(slot) {
			if n := c.byAddr(cn.Addr); n != nil {
				return n
			}
		}
	}
	c.t.Fatalf("no live master serves slot %d", slot)
	return nil
}

// Others returns the live masters that do not serve slot, and the live
// replicas of the master that does.
func (c *Cluster) Others(slot int) (masters, replicas []*Node) {
	c.t.Helper()
	topo, err := c.view()
	if err != nil {
		c.t.Fatal(err)
	}
	owner := ""
	for _, cn := range topo {
		if cn.Master && !cn.Failed && cn.Owns(slot) {
			owner = cn.ID
		}
	}
	for _, cn := range topo {
		n := c.byAddr(cn.Addr)
		if n == nil || cn.Failed || !n.Alive() {
			continue
		}
		switch {
		case cn.Master && cn.ID != owner:
			masters = append(masters, n)
		case !cn.Master && cn.MasterID == owner:
			replicas = append(replicas, n)
		}
	}
	return masters, replicas
}

// WaitPromoted waits until a live node other than old serves slot as a
// master and says cluster_state:ok, and returns it.
func (c *Cluster) WaitPromoted(slot int, old *Node, timeout time.Duration) *Node {
	c.t.Helper()
	var promoted *Node
	err := Poll(timeout, func() error {
		topo, err := c.view()
		if err != nil {
			return err
		}
		for _, cn := range topo {
			if !cn.Master || cn.Failed || !cn.Owns(slot) || c.byAddr(cn.Addr) == old {
				continue
			}
			n := c.byAddr(cn.Addr)
			if n == nil || !n.Alive() {
				continue
			}
			info, err := n.DoString("CLUSTER", "INFO")
			if err != nil {
				return err
			}
			if v, _ := infoField(info, "cluster_state"); v != "ok" {
				return fmt.Errorf("%s serves slot %d but says cluster_state:%s", n.Name, slot, v)
			}
			promoted = n
			return nil
		}
		return fmt.Errorf("no node other than %s serves slot %d yet", old.Name, slot)
	})
	if err != nil {
		c.fail("waiting for a new master of slot %d: %v", slot, err)
	}
	return promoted
}
