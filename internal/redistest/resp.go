package redistest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ReplyError is an error reply of Redis (a RESP "-" line), such as
// "MOVED 866 127.0.0.1:7001" or "ERR unknown command".
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// Do opens a connection to addr (host:port), sends one command, reads its
// reply and closes the connection. Replies are RESP2 values: string for
// simple and bulk strings, nil for a nil bulk or array, int64, []any, and
// ReplyError for an error reply. Every step is bounded by timeout.
func Do(addr string, timeout time.Duration, args ...string) (any, error) {
	return access{}.do(addr, timeout, args...)
}

// access is how the harness speaks to a node: over TLS with tls when it
// is not nil, and as AdminUser when admin (the node's default user is
// off).
type access struct {
	tls   *tls.Config
	admin bool
}

// do is Do with a's settings.
func (a access) do(addr string, timeout time.Duration, args ...string) (any, error) {
	var conn net.Conn
	var err error
	if a.tls != nil {
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, a.tls)
	} else {
		conn, err = net.DialTimeout("tcp", addr, timeout)
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	r := bufio.NewReader(conn)
	if a.admin {
		if _, err := conn.Write(encode([]string{"AUTH", AdminUser, AdminPassword})); err != nil {
			return nil, err
		}
		v, err := readReply(r)
		if err != nil {
			return nil, err
		}
		if re, ok := v.(ReplyError); ok {
			return nil, fmt.Errorf("AUTH %s: %w", AdminUser, re)
		}
	}
	if _, err := conn.Write(encode(args)); err != nil {
		return nil, err
	}
	return readReply(r)
}

// DoString is Do for commands whose reply is a string (INFO, CLUSTER
// NODES, PING); a ReplyError is returned as the error.
func DoString(addr string, timeout time.Duration, args ...string) (string, error) {
	return access{}.doString(addr, timeout, args...)
}

func (a access) doString(addr string, timeout time.Duration, args ...string) (string, error) {
	v, err := a.do(addr, timeout, args...)
	if err != nil {
		return "", err
	}
	if re, ok := v.(ReplyError); ok {
		return "", re
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: reply %v is not a string", strings.Join(args, " "), v)
	}
	return s, nil
}

func encode(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty RESP line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return ReplyError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("bad bulk length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("bad array length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown RESP type in %q", line)
}

// infoField returns the value of field in the text of INFO or CLUSTER
// INFO ("field:value" lines), and whether it is there.
func infoField(info, field string) (string, bool) {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v, true
		}
	}
	return "", false
}
