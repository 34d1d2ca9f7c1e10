package redisstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// connectionCut reports whether err says that the connection a command
// went out on broke under it: Redis or the network closed it (CLIENT
// KILL after a password rotation, a managed Redis's maintenance, a
// timeout of idle clients), and go-redis dropped it from its pool. The
// same call on another connection may well succeed, unlike a refusal
// (an error reply), a deadline, or a dial that fails.
func connectionCut(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return false // no connection was had: not a cut one
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	// go-redis's own words for a connection it retired: its sticky pool's
	// BadConnError (a transaction's connection that broke), a reply
	// stream that lost its place. Neither is exported.
	msg := err.Error()
	return strings.Contains(msg, "Conn is in a bad state") || strings.Contains(msg, "reply stream desynchronized")
}

// onceMoreIfCut runs read, and runs it once more when its connection was
// cut under it (connectionCut): go-redis has dropped that connection, so
// the second run goes out on another one, a new one when every pooled
// connection was cut at once. For reads only, which may run twice; a
// write is retried only when the cut came before its EXEC (SetQuantity).
func (s *Store) onceMoreIfCut(read func() error) error {
	err := read()
	if !connectionCut(err) {
		return err
	}
	s.cutRetries.Add(1)
	return read()
}
