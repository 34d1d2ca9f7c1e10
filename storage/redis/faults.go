package redisstore

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"
)

// clientInfo is what the store knows of its client's configuration, for
// the fixes it logs: whether it speaks TLS, the addresses it dials first
// (a node, the Cluster's seeds or the sentinels) and, in the Sentinel
// form, the master's name.
type clientInfo struct {
	tls        bool
	addrs      []string
	masterName string
}

// failoverInfo holds, for each client Config.NewClient built for a
// Sentinel-managed master, what its *redis.Client does not tell: the
// master's name and the sentinels' addresses. An entry goes with its
// client.
var failoverInfo sync.Map // weak.Pointer[redis.Client] → clientInfo

func registerFailover(c *redis.Client, o *redis.FailoverOptions) {
	key := weak.Make(c)
	failoverInfo.Store(key, clientInfo{tls: o.TLSConfig != nil, addrs: o.SentinelAddrs, masterName: o.MasterName})
	runtime.AddCleanup(c, func(k weak.Pointer[redis.Client]) { failoverInfo.Delete(k) }, key)
}

// infoOf returns what the store can learn of client's configuration.
func infoOf(client redis.UniversalClient) clientInfo {
	switch c := client.(type) {
	case *redis.ClusterClient:
		o := c.Options()
		return clientInfo{tls: o.TLSConfig != nil, addrs: o.Addrs}
	case *redis.Client:
		if v, ok := failoverInfo.Load(weak.Make(c)); ok {
			return v.(clientInfo)
		}
		o := c.Options()
		if o.Network == "unix" || o.Addr == "FailoverClient" {
			return clientInfo{tls: o.TLSConfig != nil}
		}
		return clientInfo{tls: o.TLSConfig != nil, addrs: []string{o.Addr}}
	}
	return clientInfo{}
}

// probeEvery is the shortest time between two probes of a port (see
// portSpeaksOther); in between, the last answer stands.
const probeEvery = 5 * time.Second

// portProbe is the last answer of portSpeaksOther.
type portProbe struct {
	mu  sync.Mutex
	at  time.Time
	fix string
}

// portSpeaksOther returns the fix when err (a connection closed at once,
// or no answer) comes from speaking plain text to a TLS port or TLS to a
// plain port: it asks the first address, in the other protocol, whether
// it answers that way. A TLS port closes a plain connection (EOF, reset);
// a plain port leaves a TLS handshake unanswered (a timeout).
func (s *Store) portSpeaksOther(err error) string {
	if len(s.info.addrs) == 0 {
		return ""
	}
	closed := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
	var ne net.Error
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
	if s.info.tls && !timedOut || !s.info.tls && !closed {
		return ""
	}
	p := &s.probe
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.at) < probeEvery {
		return p.fix
	}
	addr := s.info.addrs[0]
	p.at, p.fix = time.Now(), ""
	if s.info.tls && speaksPlain(addr) {
		p.fix = tlsToPlainFix("the server at " + addr)
	}
	if !s.info.tls && speaksTLS(addr) {
		p.fix = fmt.Sprintf("TLS: the server at %s speaks TLS but the client speaks plain text (redis://); use rediss://, with INVENTORY_REDIS_CA_FILE (Config.LoadTLSFiles) for a private CA", addr)
	}
	return p.fix
}

// tlsToPlainFix is the fix of a client speaking TLS to server, which
// answers in plain text.
func tlsToPlainFix(server string) string {
	return "TLS: " + server + " answers in plain text but the client speaks TLS (rediss://, or a CA or certificate file given, which turns TLS on); " +
		"for this port use redis:// without INVENTORY_REDIS_CA_FILE, _CERT_FILE and _KEY_FILE (Config.LoadTLSFiles), or name the server's TLS port"
}

// probeTimeout bounds one probe of a port.
const probeTimeout = 500 * time.Millisecond

// speaksTLS reports whether addr completes a TLS handshake (whoever
// signed its certificate).
func speaksTLS(addr string) bool {
	d := &net.Dialer{Timeout: probeTimeout}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) // asks only whether it speaks TLS; nothing is sent
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// speaksPlain reports whether addr answers a plain-text PING in RESP.
func speaksPlain(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-"))
}

// evictionFault: Redis may evict the store's keys (see Ready).
type evictionFault struct{ policy string }

func (e *evictionFault) Error() string {
	return "redis maxmemory-policy is " + e.policy + ", which can evict the store's keys"
}

func (e *evictionFault) fix() string {
	return "Redis's maxmemory-policy is " + e.policy + ": under memory pressure Redis evicts any key, the store's items, guards and change log included, and the inventory is silently lost; set maxmemory-policy noeviction (or a volatile-* policy: the store's keys have no expiry), or accept the risk with WithEvictionAllowed (INVENTORY_REDIS_ALLOW_EVICTION=1)"
}

// activeFault is the configuration fault in force: its kind, and whether
// Ready saw it (then only Ready clears it: a fault of a command only Ready
// sends, or of the eviction policy, persists while other calls succeed).
type activeFault struct {
	kind    string
	byReady bool
}

// fault records a configuration fault of kind with its fix, met by a call
// to Ready or not: logged at Error when it starts (or replaces another),
// counted every time.
func (s *Store) fault(kind, fix string, err error, ready bool) {
	s.configFaults.Add(1)
	for {
		old := s.activeFault.Load()
		if old != nil && old.kind == kind && (old.byReady || !ready) {
			return
		}
		if s.activeFault.CompareAndSwap(old, &activeFault{kind: kind, byReady: ready}) {
			if old == nil || old.kind != kind {
				s.log.Error("redisstore: configuration fault: "+fix, "fault", kind, "error", err.Error())
			}
			return
		}
	}
}

// cleared records that a call (Ready or not) succeeded: a configuration
// fault in force is over, logged at Info, unless Ready saw it and this is
// not Ready.
func (s *Store) cleared(ready bool) {
	old := s.activeFault.Load()
	if old == nil || old.byReady && !ready {
		return
	}
	if s.activeFault.CompareAndSwap(old, nil) {
		s.log.Info("redisstore: configuration fault cleared: the store serves again", "fault", old.kind)
	}
}
