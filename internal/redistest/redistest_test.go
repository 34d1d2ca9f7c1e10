package redistest

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redisurl"
	"github.com/petinventory/petinventory/internal/resp"
)

// TestProxyDelays checks that a command through the proxy takes at least
// the delay each way, and that its reply is intact.
func TestProxyDelays(t *testing.T) {
	t.Parallel()
	n := StartNode(t, "proxied")
	const delay = 50 * time.Millisecond
	p := StartProxy(t, n.Addr(), delay)
	if _, err := n.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := DoString(p.Addr(), Timeout, "GET", "k")
	took := time.Since(start)
	if err != nil || got != "v" {
		t.Fatalf("GET through the proxy = %q, %v; want v", got, err)
	}
	if took < 2*delay {
		t.Errorf("a round trip through the proxy took %v, want at least %v", took, 2*delay)
	}
	t.Logf("round trip through a %v proxy: %v", delay, took)
	n.Kill()
	if _, err := DoString(p.Addr(), Timeout, "PING"); err == nil {
		t.Error("PING through the proxy to a killed node succeeded")
	}
}

// TestProxySever checks that Sever drops what is in flight: a SET sent
// through the proxy just before never reaches Redis.
func TestProxySever(t *testing.T) {
	t.Parallel()
	n := StartNode(t, "severed")
	p := StartProxy(t, n.Addr(), 300*time.Millisecond)
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, resp.Encode([]string{"SET", "k", "lost"})); err != nil {
		t.Fatal(err)
	}
	// The SET is in the proxy's queue once the proxy has dialled Redis.
	if err := Poll(5*time.Second, func() error {
		v, err := n.Info("clients", "connected_clients")
		if err == nil && v != "2" { // the proxy's and this INFO's
			err = fmt.Errorf("%s clients", v)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	p.Sever()
	time.Sleep(2 * p.Delay) // past the moment it would have been delivered
	if v, err := n.Do("GET", "k"); err != nil || v != nil {
		t.Fatalf("GET k = %v, %v after Sever; want nil: the SET in flight was delivered", v, err)
	}
}

// TestClusterFailover starts a cluster, kills the master of a key's slot
// and waits for its replica to take over.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	c := StartCluster(t)
	slot := c.KeySlot("{inventory}:items")
	master := c.MasterOf(slot)
	others, replicas := c.Others(slot)
	if len(others) != 2 || len(replicas) != 1 {
		t.Fatalf("slot %d: %d other masters and %d replicas, want 2 and 1", slot, len(others), len(replicas))
	}
	if v, err := others[0].Do("SET", "{inventory}:items", "1"); err != nil || v != ReplyError("MOVED "+strconv.Itoa(slot)+" "+master.Addr()) {
		t.Fatalf("a non-owning master answered %v, %v; want MOVED to %s", v, err, master.Addr())
	}
	killed := time.Now()
	master.Kill()
	promoted := c.WaitPromoted(slot, master, 30*time.Second)
	if promoted != replicas[0] {
		t.Errorf("%s was promoted, want the replica %s", promoted.Name, replicas[0].Name)
	}
	t.Logf("cluster: %s promoted %v after the kill of %s", promoted.Name, time.Since(killed).Round(time.Millisecond), master.Name)
}

// TestSentinelFailover starts a Sentinel set with lagging replicas, kills
// the master and waits for the sentinels to promote a replica.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	s := StartSentinel(t, SentinelOptions{ReplicaLag: 50 * time.Millisecond})
	master := s.Master()
	if master != s.Data[0] {
		t.Fatalf("the sentinels name %s as master, want %s", master.Name, s.Data[0].Name)
	}
	if err := s.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	master.Kill()
	promoted := s.WaitFailover(master, SentinelPromotedWithin)
	t.Logf("sentinel: %s promoted %v after the kill of %s", promoted.Name, time.Since(killed).Round(time.Millisecond), master.Name)
	other := s.Replicas()
	if len(other) != 1 {
		t.Fatalf("%d live replicas after the promotion, want 1", len(other))
	}
	if _, err := Replicated("redistest:failover-marker", promoted, other...); err != nil {
		t.Fatalf("%s does not stream from %s: %v", other[0].Name, promoted.Name, err)
	}
	// Every sentinel has switched to the promoted master; for a while
	// after its switch it could judge it down and fail it over again
	// (see SentinelDownAfter). Watch past that window: the promotion must
	// hold and keep its replica.
	time.Sleep(SentinelDownAfter + 2*time.Second) // a window to watch, not a wait for a state
	if down := s.JudgedDown(promoted); len(down) > 0 {
		t.Errorf("a sentinel judged the promoted master down:\n%s", strings.Join(down, "\n"))
	}
	if now := s.Master(); now != promoted {
		t.Errorf("the sentinels failed over again, from %s to %s", promoted.Name, now.Name)
	}
	if v, err := promoted.Info("replication", "connected_slaves"); err != nil || v != "1" {
		t.Errorf("%s has %q connected replicas (%v), want 1", promoted.Name, v, err)
	}
}

// TestClusterReplicaLag starts a cluster whose replicas replicate through
// delaying proxies, checks the lag is there (and clients still reach the
// nodes directly), then kills a master and waits for the promotion.
func TestClusterReplicaLag(t *testing.T) {
	t.Parallel()
	const lag = 50 * time.Millisecond
	c := StartClusterWith(t, ClusterOptions{ReplicaLag: lag})
	if err := c.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	slot := c.KeySlot("{inventory}:items")
	master := c.MasterOf(slot)
	_, replicas := c.Others(slot)
	took, err := Replicated("{inventory}:marker", master, replicas...)
	if err != nil {
		t.Fatal(err)
	}
	if took < lag {
		t.Errorf("a write reached the replica in %v, less than the %v lag", took, lag)
	}
	// Clients are told to use 127.0.0.1, not the proxies.
	v, err := master.Do("CLUSTER", "SLOTS")
	if err != nil {
		t.Fatal(err)
	}
	ranges, _ := v.([]any)
	for _, r := range ranges {
		fields, _ := r.([]any)
		for _, node := range fields[2:] { // start, end, then [endpoint, port, id, metadata]…
			if endpoint := node.([]any)[0]; endpoint != "127.0.0.1" {
				t.Errorf("CLUSTER SLOTS tells clients to use %v, want 127.0.0.1: %v", endpoint, v)
			}
		}
	}
	killed := time.Now()
	c.Sever(master)
	master.Kill()
	promoted := c.WaitPromoted(slot, master, 30*time.Second)
	t.Logf("cluster with %v lag: a write reached the replica in %v; %s promoted %v after the kill", lag, took.Round(time.Millisecond), promoted.Name, time.Since(killed).Round(time.Millisecond))
}

// TestStartTLSNode: a TLS-only node answers the harness over TLS, with
// the client certificate when the node requires one, and nothing in
// plain text.
func TestStartTLSNode(t *testing.T) {
	files := NewTLSFiles(t)
	n := StartTLSNode(t, "tls", files, "--tls-auth-clients", "yes")
	if pong, err := n.DoString("PING"); err != nil || pong != "PONG" {
		t.Fatalf("PING over TLS = %q, %v", pong, err)
	}
	if _, err := DoString(n.Addr(), Timeout, "PING"); err == nil {
		t.Error("PING in plain text to a TLS-only node succeeded")
	}
	if v, err := n.Do("CONFIG", "GET", "port"); err != nil || fmt.Sprint(v) != "[port 0]" {
		t.Errorf("CONFIG GET port = %v, %v; want 0 (no plain port)", v, err)
	}
}

// TestJudgedDown reads +sdown of a master from crafted sentinel logs: the
// line of the node's port counts, not one of a port it is a prefix of,
// nor a replica's.
func TestJudgedDown(t *testing.T) {
	logs := []string{
		"1:X 27 Nov 2026 13:58:09.972 # +sdown master inventory-master 127.0.0.1 4000\n" +
			"1:X 27 Nov 2026 13:58:10.076 # -sdown master inventory-master 127.0.0.1 4000\n",
		"2:X 27 Nov 2026 13:58:09.972 # +sdown master inventory-master 127.0.0.1 40001\n" +
			"2:X 27 Nov 2026 13:58:10.022 # +sdown slave 127.0.0.1:4000 127.0.0.1 4000 @ inventory-master 127.0.0.1 40001\n",
	}
	s := &SentinelSet{MasterName: "inventory-master", t: t}
	for i, text := range logs {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "redis.log"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		s.Sentinels = append(s.Sentinels, &Node{Name: "sentinel-" + strconv.Itoa(i), Dir: dir})
	}
	got := s.JudgedDown(&Node{Port: 4000})
	want := "sentinel-0: 1:X 27 Nov 2026 13:58:09.972 # +sdown master inventory-master 127.0.0.1 4000"
	if len(got) != 1 || got[0] != want {
		t.Errorf("JudgedDown = %q, want [%q]", got, want)
	}
	if got := s.JudgedDown(&Node{Port: 4001}); len(got) != 0 {
		t.Errorf("JudgedDown of a node no sentinel judged down = %q", got)
	}
}

// TestStopContinue: a stopped node answers nothing, and answers again
// once continued.
func TestStopContinue(t *testing.T) {
	t.Parallel()
	n := StartNode(t, "stopped")
	n.Stop()
	if _, err := Do(n.Addr(), 200*time.Millisecond, "PING"); err == nil {
		t.Fatal("a stopped node answered PING")
	}
	n.Continue()
	if err := Poll(5*time.Second, func() error { _, err := n.DoString("PING"); return err }); err != nil {
		t.Fatalf("a continued node does not answer PING: %v", err)
	}
}

// TestURLs: the rigs' URLs read, with the grammar the store and the suite
// share, as the topology and addresses of the rig.
func TestURLs(t *testing.T) {
	nodes := []*Node{{Port: 7000}, {Port: 7001}, {Port: 7002}}
	tlsNode := &Node{Port: 7003, access: access{tls: &tls.Config{}}}
	set := &SentinelSet{MasterName: "inventory-master", Sentinels: nodes}
	for _, tc := range []struct {
		url   string
		want  redisurl.Topology
		addrs []string
		tls   bool
	}{
		{set.URL(), redisurl.Sentinel, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, false},
		{(&SentinelSet{MasterName: "m", Sentinels: []*Node{tlsNode}}).URL(), redisurl.Sentinel, []string{"127.0.0.1:7003"}, true},
		{(&Cluster{Nodes: nodes}).URL(), redisurl.Cluster, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, false},
		{ClusterURL(nodes[2], nodes[0]), redisurl.Cluster, []string{"127.0.0.1:7002", "127.0.0.1:7000"}, false},
		{ClusterURL(nodes[1]), redisurl.Cluster, []string{"127.0.0.1:7001"}, false},
		{ClusterURL(tlsNode), redisurl.Cluster, []string{"127.0.0.1:7003"}, true},
	} {
		u, err := redisurl.Parse(tc.url)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if u.Topology != tc.want || !slices.Equal(u.Addrs, tc.addrs) || u.TLS != tc.tls {
			t.Errorf("%s reads as %s %q (TLS %v), want %s %q (TLS %v)", tc.url, u.Topology, u.Addrs, u.TLS, tc.want, tc.addrs, tc.tls)
		}
	}
	if u, _ := redisurl.Parse(set.URL()); u == nil || u.MasterName != "inventory-master" {
		t.Errorf("%s: the master's name is lost", set.URL())
	}
}
