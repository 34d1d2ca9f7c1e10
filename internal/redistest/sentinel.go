package redistest

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Sentinel timings of the sets StartSentinel makes: a master that does not
// answer two of the sentinels for SentinelDownAfter is objectively down
// (quorum 2) and the failover starts; the promotion follows a second or
// two later, so SentinelPromotedWithin of the kill on a loaded machine.
//
// SentinelDownAfter must stay well above one second. A sentinel retries a
// broken link once a second at most (SENTINEL_PING_PERIOD, not tunable),
// and on +switch-master it resets the master: its link is reopened under
// that limit (the one to the dead master was just retried), the clock of
// the unanswered PING starts at the switch, the "master down" replies of
// the other sentinels from the first failover still count for the quorum,
// and the failover delay (twice the failover-timeout) is cleared. With
// 1000 ms a sentinel could judge the master it had just switched to down
// before its first PONG arrived, and fail it over at once to the other
// replica: the first promoted node stayed a master with no replica, the
// second had none either (its only other replica is the killed node).
const (
	SentinelDownAfter = 2 * time.Second
	// SentinelLastDownAfter is the down-after-milliseconds of the last
	// sentinel of a set. A sentinel starts a failover, voting for itself,
	// only once it sees the master down itself; if all three start at
	// once, each has its own vote and none a majority, and the next try
	// waits twice the failover-timeout. With the last one later, at most
	// two sentinels compete, and the third votes for the first that asks
	// (a sentinel votes whether or not it sees the master down): one of
	// them always has two votes. The first two sentinels still make the
	// quorum, so it does not slow the failover.
	SentinelLastDownAfter = SentinelDownAfter + 3*time.Second
	// SentinelPromotedWithin bounds the wait for a promotion after the
	// master is killed: down-after, up to one PING period before that,
	// the election, the promotion, with room for a loaded machine.
	SentinelPromotedWithin  = SentinelDownAfter + 15*time.Second
	SentinelFailoverTimeout = 10 * time.Second
	// SentinelLagFailoverTimeout is the failover-timeout of a set whose
	// replicas replicate through a delaying Proxy. A sentinel "fixes" a
	// replica whose master address is not the master's own once the
	// failover-timeout has passed since it saw it, which would take the
	// proxy out; so with lag it is long (a second failover attempt, if
	// the first stalls, would wait twice this, which SentinelLastDownAfter
	// prevents).
	SentinelLagFailoverTimeout = 120 * time.Second
)

// SentinelOptions tunes StartSentinel.
type SentinelOptions struct {
	// ReplicaLag, when positive, makes each replica replicate through a
	// Proxy of its own that delays the stream by this much each way.
	ReplicaLag time.Duration
	// TLS, when set, makes every redis-server and sentinel TLS-only with
	// these files, replication and the sentinels' links included
	// (tls-replication), and the harness speaks TLS too. It does not go
	// with ReplicaLag.
	TLS *TLSFiles
	// DefaultUserOff turns the default user of the redis-servers (not the
	// sentinels) off: clients must authenticate to the master as a user
	// the test adds on every data node (SetUser), and the harness,
	// replication and the sentinels speak to them as AdminUser.
	DefaultUserOff bool
}

// SentinelSet is a Sentinel-managed master with two replicas and three
// sentinels (quorum 2).
type SentinelSet struct {
	MasterName string  // the name the sentinels monitor: "inventory-master"
	Data       []*Node // the redis-servers: Data[0] was the first master
	Sentinels  []*Node
	Proxies    []*Proxy // with ReplicaLag: Proxies[i] carries Data[i+1]'s replication
	t          testing.TB
}

// StartSentinel starts a master, two replicas of it (through delaying
// proxies with opts.ReplicaLag) and three sentinels that monitor it with
// quorum 2, and waits until the replicas are in sync and every sentinel
// sees the master, both replicas and the two other sentinels. Every
// process is stopped when the test ends.
func StartSentinel(t testing.TB, opts SentinelOptions) *SentinelSet {
	t.Helper()
	Require(t)
	if opts.TLS != nil && opts.ReplicaLag > 0 {
		t.Fatal("redistest: SentinelOptions: TLS does not go with ReplicaLag")
	}
	start := time.Now()
	s := &SentinelSet{MasterName: "inventory-master", t: t}
	data := func(name string, args ...string) *Node {
		if opts.TLS != nil {
			args = append([]string{"--tls-replication", "yes"}, args...)
		}
		return StartNodeWith(t, name, NodeOptions{TLS: opts.TLS, DefaultUserOff: opts.DefaultUserOff}, args...)
	}
	var conf *tls.Config
	if opts.TLS != nil {
		conf = opts.TLS.ClientConfig(t)
	}
	master := data("sentinel-data-0")
	s.Data = append(s.Data, master)
	for i := 1; i <= 2; i++ {
		upstream := master.Addr()
		if opts.ReplicaLag > 0 {
			p := StartProxy(t, master.Addr(), opts.ReplicaLag)
			s.Proxies = append(s.Proxies, p)
			upstream = p.Addr()
		}
		host, port, _ := strings.Cut(upstream, ":")
		s.Data = append(s.Data, data("sentinel-data-"+strconv.Itoa(i), "--replicaof", host, port))
	}
	if err := Poll(20*time.Second, s.replicasInSync); err != nil {
		s.fail("the replicas did not sync: %v", err)
	}
	failoverTimeout := SentinelFailoverTimeout
	if opts.ReplicaLag > 0 {
		failoverTimeout = SentinelLagFailoverTimeout
	}
	for i := range 3 {
		downAfter := SentinelDownAfter
		if i == 2 {
			downAfter = SentinelLastDownAfter
		}
		s.Sentinels = append(s.Sentinels, startNodeAs(t, "sentinel-"+strconv.Itoa(i), access{tls: conf}, func(port int, dir string) []string {
			conf := filepath.Join(dir, "sentinel.conf")
			name := s.MasterName
			ports := fmt.Sprintf("port %d\n", port)
			if f := opts.TLS; f != nil {
				ports = fmt.Sprintf("port 0\ntls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients optional\ntls-replication yes\n",
					port, f.ServerCert, f.ServerKey, f.CA)
			}
			text := ports + fmt.Sprintf("bind 127.0.0.1\ndir %s\nlogfile %s\n", dir, filepath.Join(dir, "redis.log")) +
				fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\n", name, master.Port) +
				fmt.Sprintf("sentinel down-after-milliseconds %s %d\n", name, downAfter.Milliseconds()) +
				fmt.Sprintf("sentinel failover-timeout %s %d\n", name, failoverTimeout.Milliseconds()) +
				fmt.Sprintf("sentinel parallel-syncs %s 2\n", name)
			if opts.DefaultUserOff {
				text += fmt.Sprintf("sentinel auth-user %s %s\nsentinel auth-pass %s %s\n", name, AdminUser, name, AdminPassword)
			}
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{conf, "--sentinel"}
		}))
	}
	synced := time.Since(start)
	if err := Poll(30*time.Second, s.sentinelsAgree); err != nil {
		s.fail("the sentinels did not see the whole set: %v", err)
	}
	t.Logf("sentinel set (1 master, 2 replicas, 3 sentinels) healthy in %v (replicas in sync after %v)",
		time.Since(start).Round(time.Millisecond), synced.Round(time.Millisecond))
	return s
}

func (s *SentinelSet) fail(format string, args ...any) {
	s.t.Helper()
	failWithLogs(s.t, append(append([]*Node{}, s.Data...), s.Sentinels...), format, args...)
}

// SentinelAddrs are the sentinels' addresses.
func (s *SentinelSet) SentinelAddrs() []string {
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr()
	}
	return addrs
}

func (s *SentinelSet) replicasInSync() error {
	if v, err := s.Data[0].Info("replication", "connected_slaves"); err != nil || v != "2" {
		return fmt.Errorf("master has %q connected replicas (%v), want 2", v, err)
	}
	for _, n := range s.Data[1:] {
		if v, err := n.Info("replication", "master_link_status"); err != nil || v != "up" {
			return fmt.Errorf("%s: master_link_status %q (%v)", n.Name, v, err)
		}
	}
	return nil
}

// sentinelsAgree: every sentinel sees the master as a master, both
// replicas as healthy replicas, and the two other sentinels.
func (s *SentinelSet) sentinelsAgree() error {
	for _, sn := range s.Sentinels {
		v, err := sn.Do("SENTINEL", "MASTER", s.MasterName)
		if err != nil {
			return fmt.Errorf("%s: %w", sn.Name, err)
		}
		m := pairs(v)
		if m["flags"] != "master" || m["num-slaves"] != "2" || m["num-other-sentinels"] != "2" {
			return fmt.Errorf("%s sees the master with flags %q, %s replicas, %s other sentinels",
				sn.Name, m["flags"], m["num-slaves"], m["num-other-sentinels"])
		}
		v, err = sn.Do("SENTINEL", "REPLICAS", s.MasterName)
		if err != nil {
			return fmt.Errorf("%s: %w", sn.Name, err)
		}
		list, _ := v.([]any)
		for _, r := range list {
			m := pairs(r)
			if m["flags"] != "slave" || m["master-link-status"] != "ok" {
				return fmt.Errorf("%s sees replica %s:%s with flags %q, link %q", sn.Name, m["ip"], m["port"], m["flags"], m["master-link-status"])
			}
		}
	}
	return nil
}

// pairs turns a flat RESP array of field, value, … into a map.
func pairs(v any) map[string]string {
	list, _ := v.([]any)
	m := make(map[string]string, len(list)/2)
	for i := 0; i+1 < len(list); i += 2 {
		k, _ := list[i].(string)
		val, _ := list[i+1].(string)
		m[k] = val
	}
	return m
}

// byAddr returns the data node at addr.
func (s *SentinelSet) byAddr(addr string) *Node {
	for _, n := range s.Data {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// Master returns the data node the first live sentinel names as master.
func (s *SentinelSet) Master() *Node {
	s.t.Helper()
	for _, sn := range s.Sentinels {
		if !sn.Alive() {
			continue
		}
		if n, err := s.masterSeenBy(sn); err == nil {
			return n
		}
	}
	s.t.Fatal("no sentinel names a master of the set")
	return nil
}

func (s *SentinelSet) masterSeenBy(sn *Node) (*Node, error) {
	v, err := sn.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.MasterName)
	if err != nil {
		return nil, err
	}
	list, _ := v.([]any)
	if len(list) != 2 {
		return nil, fmt.Errorf("%s: GET-MASTER-ADDR-BY-NAME answered %v", sn.Name, v)
	}
	host, _ := list[0].(string)
	port, _ := list[1].(string)
	n := s.byAddr(host + ":" + port)
	if n == nil {
		return nil, fmt.Errorf("%s names %s:%s, which is no node of the set", sn.Name, host, port)
	}
	return n, nil
}

// Replicas returns the live data nodes that are not the master.
func (s *SentinelSet) Replicas() []*Node {
	master := s.Master()
	var out []*Node
	for _, n := range s.Data {
		if n != master && n.Alive() {
			out = append(out, n)
		}
	}
	return out
}

// LagInPlace reports an error unless every live replica still
// replicates through its delaying proxy (a sentinel may have pointed it
// at the master directly).
func (s *SentinelSet) LagInPlace() error {
	for i, p := range s.Proxies {
		n := s.Data[i+1]
		if !n.Alive() {
			continue
		}
		port, err := n.Info("replication", "master_port")
		if err != nil {
			return err
		}
		if port != strconv.Itoa(p.Port()) {
			return fmt.Errorf("%s replicates from port %s, not through its proxy on %d", n.Name, port, p.Port())
		}
	}
	return nil
}

// WaitFailover waits until every live sentinel names a master other than
// old and that node says role:master, and returns it.
func (s *SentinelSet) WaitFailover(old *Node, timeout time.Duration) *Node {
	s.t.Helper()
	var promoted *Node
	err := Poll(timeout, func() error {
		promoted = nil
		for _, sn := range s.Sentinels {
			if !sn.Alive() {
				continue
			}
			n, err := s.masterSeenBy(sn)
			if err != nil {
				return err
			}
			if n == old {
				return fmt.Errorf("%s still names %s", sn.Name, old.Name)
			}
			if promoted != nil && n != promoted {
				return fmt.Errorf("the sentinels name different masters")
			}
			promoted = n
		}
		if role, err := promoted.Info("replication", "role"); err != nil || role != "master" {
			return fmt.Errorf("%s: role %q (%v)", promoted.Name, role, err)
		}
		return nil
	})
	if err != nil {
		s.fail("waiting for the sentinels to promote a new master: %v", err)
	}
	return promoted
}

// ReplicationDelay writes a marker key on the master and returns how long
// it took to appear on every live replica (to the 5 ms of polling): the
// replication lag right now, as a reader of a replica would see it.
func (s *SentinelSet) ReplicationDelay() (time.Duration, error) {
	return Replicated("redistest:replication-marker", s.Master(), s.Replicas()...)
}

// JudgedDown returns the lines of the sentinels' logs that mark n, as the
// master of the set, subjectively down (+sdown master). After a failover
// to n there must be none: a sentinel that judged the master it had just
// switched to down would fail it over again (see SentinelDownAfter).
func (s *SentinelSet) JudgedDown(n *Node) []string {
	mark := fmt.Sprintf("+sdown master %s 127.0.0.1 %d", s.MasterName, n.Port)
	var lines []string
	for _, sn := range s.Sentinels {
		for line := range strings.Lines(sn.Log()) {
			if line = strings.TrimSpace(line); strings.HasSuffix(line, mark) { // the port ends the line
				lines = append(lines, sn.Name+": "+line)
			}
		}
	}
	return lines
}
