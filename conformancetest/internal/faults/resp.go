package faults

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ReplyError is an error reply of Redis ("-ERR …", "-WRONGPASS …").
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// Conn is one connection to a Redis server. It is not safe for
// concurrent use.
type Conn struct {
	nc      net.Conn
	r       *bufio.Reader
	addr    string
	timeout time.Duration
}

// Dial connects to addr (host:port, or a socket path for network
// "unix"), over TLS when tlsConf is not nil, and authenticates with user
// and password when password is not empty (AUTH password alone when user
// is empty). Each command's reply must come within timeout.
func Dial(ctx context.Context, network, addr string, tlsConf *tls.Config, user, password string, timeout time.Duration) (*Conn, error) {
	d := net.Dialer{Timeout: timeout}
	var nc net.Conn
	var err error
	if tlsConf != nil {
		td := tls.Dialer{NetDialer: &d, Config: tlsConf}
		nc, err = td.DialContext(ctx, network, addr)
	} else {
		nc, err = d.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	c := &Conn{nc: nc, r: bufio.NewReader(nc), addr: addr, timeout: timeout}
	if password != "" {
		args := []string{"AUTH", password}
		if user != "" {
			args = []string{"AUTH", user, password}
		}
		if _, err := c.Do(args...); err != nil {
			c.Close()
			var re ReplyError
			if errors.As(err, &re) {
				// The reply names no password; say which user it refused.
				return nil, fmt.Errorf("%s refused the credentials of user %q: %v", addr, userOrDefault(user), re)
			}
			return nil, err
		}
	}
	return c, nil
}

func userOrDefault(u string) string {
	if u == "" {
		return "default"
	}
	return u
}

// Addr is the address the connection was dialled to.
func (c *Conn) Addr() string { return c.addr }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Do sends one command and returns its reply: a string (simple or bulk),
// an int64, nil (a null bulk string or array), or a []any of those. An
// error reply is a ReplyError; a broken connection another error.
func (c *Conn) Do(args ...string) (any, error) {
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c.nc, b.String()); err != nil {
		return nil, err
	}
	return readReply(c.r)
}

// maxBulk bounds a bulk string or an array read, so that a peer that is
// not Redis cannot make the client allocate without end.
const maxBulk = 64 << 20

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("not a RESP reply: %q", strings.TrimSpace(line))
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, ReplyError(body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not a RESP integer: %q", body)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulk {
			return nil, fmt.Errorf("not a RESP bulk length: %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return nil, errors.New("a RESP bulk string without its CRLF")
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulk {
			return nil, fmt.Errorf("not a RESP array length: %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		out := make([]any, 0, min(n, 1024))
		for range n {
			v, err := readReply(r)
			var re ReplyError
			if err != nil && !errors.As(err, &re) {
				return nil, err
			}
			if err != nil {
				v = re // an error inside an array is one of its elements
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a RESP reply: %q", strings.TrimSpace(line))
}
