package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/petinventory/petinventory/internal/resp"
)

// ReplyError is an error reply of Redis (a RESP "-" line), such as
// "MOVED 866 127.0.0.1:7001" or "ERR unknown command".
type ReplyError = resp.ReplyError

// Do opens a connection to addr (host:port), sends one command, reads its
// reply and closes the connection. Replies are RESP2 values: string for
// simple and bulk strings, nil for a nil bulk or array, int64, []any, and
// ReplyError for an error reply (a value, not the error: the error is a
// connection's or the protocol's). Every step is bounded by timeout.
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

// do is Do with a's settings, over the repository's RESP client.
func (a access) do(addr string, timeout time.Duration, args ...string) (any, error) {
	user, password := "", ""
	if a.admin {
		user, password = AdminUser, AdminPassword
	}
	c, err := resp.Dial(context.Background(), "tcp", addr, a.tls, user, password, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.Do(args...)
	if re := ReplyError(""); errors.As(err, &re) {
		return re, nil
	}
	return v, err
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
