package resp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

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
// is empty). The dial, the TLS handshake and each command's reply must
// come within timeout. A refused AUTH is an error that names the user
// and wraps the ReplyError, never the password.
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
				return nil, fmt.Errorf("%s refused the credentials of user %q: %w", addr, userOrDefault(user), re)
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
// an int64, nil (a null bulk string or array), or a []any of those (an
// error inside an array is a ReplyError element). An error reply is a
// ReplyError; a broken connection or a reply that is not RESP another
// error.
func (c *Conn) Do(args ...string) (any, error) {
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(c.nc, Encode(args)); err != nil {
		return nil, err
	}
	return ReadReply(c.r)
}
