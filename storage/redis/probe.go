package redisstore

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// probeEvery is the shortest time between two probes of a port (see
// portSpeaksOther); in between, the last answer stands.
const probeEvery = 5 * time.Second

// probeTimeout bounds one probe of a port.
const probeTimeout = 500 * time.Millisecond

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
		p.fix = s.tlsToPlainFix("the server at " + addr)
	}
	if !s.info.tls && speaksTLS(addr) {
		p.fix = s.plainToTLSFix(addr)
	}
	return p.fix
}

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
