package redistest

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy on a loopback port that forwards every connection
// to a target address and delays each chunk of bytes, in both directions,
// by a fixed time, keeping their order: a replica that replicates through
// it receives the master's stream that much later (replication lag), and
// its acknowledgements arrive that much later too.
type Proxy struct {
	Delay  time.Duration
	target string
	ln     net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	epoch  atomic.Int64 // bumped by Sever: chunks read before it are dropped
	toCut  atomic.Int64 // chunks from clients still to cut their connection (CutNext)
	cuts   atomic.Int64 // connections cut so far
}

// StartProxy listens on a free loopback port and forwards to target with
// delay; it is closed, with every connection, when the test ends.
func StartProxy(t testing.TB, target string, delay time.Duration) *Proxy {
	t.Helper()
	return StartProxyAt(t, "127.0.0.1:0", target, delay)
}

// StartProxyAt is StartProxy listening on addr, for example the target's
// own port on another loopback address (127.0.0.2).
func StartProxyAt(t testing.TB, addr, target string, delay time.Duration) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Delay: delay, target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Close stops accepting, closes every connection and waits for the
// forwarding goroutines to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// Sever closes every open connection at once and drops the bytes still
// in flight, as when the host at one end goes down: what the proxy has
// read but not yet delivered (up to Delay's worth of stream) is lost. It
// keeps accepting new connections.
func (p *Proxy) Sever() {
	p.epoch.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// CutNext makes the proxy cut the connections that carry the next n
// chunks of bytes from a client: each such chunk is dropped, never
// reaching the target, and its connection is closed at both ends. The
// client has sent its command and reads EOF, as when Redis kills it
// (CLIENT KILL) with the command in flight, and the command never ran.
func (p *Proxy) CutNext(n int) { p.toCut.Store(int64(n)) }

// Cuts is how many connections CutNext has cut so far.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

// takeCut reports whether the chunk just read from a client is one
// CutNext asked to cut.
func (p *Proxy) takeCut() bool {
	for {
		n := p.toCut.Load()
		if n <= 0 {
			return false
		}
		if p.toCut.CompareAndSwap(n, n-1) {
			p.cuts.Add(1)
			return true
		}
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(in) {
			return
		}
		out, err := net.DialTimeout("tcp", p.target, Timeout)
		if err != nil { // the target is down: the client sees a closed connection
			in.Close()
			continue
		}
		if !p.track(out) {
			in.Close()
			return
		}
		p.wg.Add(2)
		go p.pipe(in, out, true)
		go p.pipe(out, in, false)
	}
}

type chunk struct {
	due   time.Time
	epoch int64
	data  []byte
}

// pipe copies from src to dst, each chunk Delay after it was read. When
// src ends, what was read is still delivered, then dst's write side is
// closed: bytes in flight when a master dies still reach the replica, as
// on a real network. fromClient says that src is the client's side, whose
// chunks CutNext may cut.
func (p *Proxy) pipe(src, dst net.Conn, fromClient bool) {
	defer p.wg.Done()
	queue := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range queue {
			time.Sleep(time.Until(c.due))
			if c.epoch != p.epoch.Load() { // severed: never delivered
				continue
			}
			if _, err := dst.Write(c.data); err != nil {
				src.Close()
				for range queue { // drain, so the reader never blocks
				}
				return
			}
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && fromClient && p.takeCut() {
			src.Close()
			dst.Close()
			break
		}
		if n > 0 {
			queue <- chunk{due: time.Now().Add(p.Delay), epoch: p.epoch.Load(), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dst.Close()
			}
			break
		}
	}
	close(queue)
	<-done
}
