package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// translate is the one place where errors from go-redis become the
// library's. op names the Store method for the message.
//
//   - redis.Nil (no such field) → inventory.ErrNotFound;
//   - an error of package inventory (ErrNotFound) or of this package's
//     corrupt → unchanged;
//   - Redis cannot be reached or answered too late, or refuses work for
//     now (see unavailable) → an *inventory.Error with code unavailable
//     wrapping the cause, which the API answers 503 with Retry-After;
//   - anything else → a plain error wrapping the cause, which the API
//     answers 500 and logs.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if isNil(err) {
		return inventory.ErrNotFound
	}
	var ie *inventory.Error
	if errors.As(err, &ie) || errors.Is(err, errCorrupt) {
		return err
	}
	if unavailable(err) {
		return inventory.Unavailable(fmt.Errorf("redis %s: Redis cannot be reached, timed out, or refuses work for now: %w", op, err))
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}

// errRedirected: a Cluster kept redirecting a transaction (MOVED or ASK)
// past the client's max_redirects: a slot moving, or a failover under
// way. See Store.watch.
var errRedirected = errors.New("redis: the Cluster redirected the transaction (MOVED or ASK) more times than max_redirects allows; its slot is moving or failing over")

// isNil reports whether err is Redis's nil reply itself (a missing key
// or field), as a command returns it. A wrapped one is something else:
// go-redis's Sentinel client wraps the nil reply of a sentinel that knows
// no master of the configured name, and that is no missing entry.
func isNil(err error) bool {
	return err == redis.Nil
}

// reloadAfter reports whether err tells that a ClusterClient's slot map
// may be out of date: the node did not answer or refused the slot
// (a connection error, a timeout, CLUSTERDOWN, TRYAGAIN, MOVED, ASK,
// READONLY from a master demoted to replica).
func reloadAfter(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false // the caller gave up: says nothing of the Cluster
	}
	if unavailable(err) {
		return true
	}
	return isRedirect(err)
}

// unavailable reports whether err says that Redis cannot serve the call
// now but may soon: the call's deadline passed or it was cancelled, no
// connection could be had (dial failure, refused, reset, closed, pool
// timeout), or Redis answered with an error that means "not now": LOADING
// (restarting), a node no longer master (isDemoted: during a failover),
// MASTERDOWN, CLUSTERDOWN, TRYAGAIN (slot migration), or max clients
// reached.
//
// Authentication, permission, out-of-memory and TLS errors are not in the
// list: they are configuration faults (see Store.classify), also answered
// 503 but logged with their fix.
func unavailable(err error) bool {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted), errors.Is(err, redis.ErrClosed):
		return true
	case redis.IsLoadingError(err), redis.IsMasterDownError(err),
		redis.IsClusterDownError(err), redis.IsTryAgainError(err), redis.IsMaxClientsError(err):
		return true
	case isDemoted(err):
		return true
	case errors.Is(err, errRedirected):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// Dial errors, DNS failures and socket timeouts are net.Errors
	// (*net.OpError, *net.DNSError, os.ErrDeadlineExceeded).
	var ne net.Error
	return errors.As(err, &ne)
}

// The replies of Redis the store tells apart, each by one named check.
// go-redis's own IsMovedError, IsExecAbortError, IsPermissionError and
// IsReadOnlyError fall back to the text of any error, so that an error
// of no Redis that happens to start with MOVED would pass; these look at
// error replies only (TestReplyChecks), and are the one place each is
// told.

// isReply reports whether err is an error reply of Redis.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// replyText is the text of the error reply err holds, "" when it holds
// none.
func replyText(err error) string {
	var re redis.Error
	if !errors.As(err, &re) {
		return ""
	}
	return re.Error()
}

// isDemoted reports whether err says that the node is no longer a master
// (a failover, or REPLICAOF sent to it): READONLY, a write refused by a
// replica; "ERR WAIT cannot be used with replica instances", WAIT sent to
// one; or "UNBLOCKED force unblock from blocking operation, instance state
// changed (master -> replica?)", the answer of a WAIT that was blocked
// when its master became a replica (Redis 7).
func isDemoted(err error) bool {
	msg := replyText(err)
	return strings.HasPrefix(msg, "READONLY ") ||
		strings.HasPrefix(msg, "UNBLOCKED ") && strings.Contains(msg, "master -> replica") ||
		strings.HasPrefix(msg, "ERR WAIT cannot be used with replica")
}

// isRedirect reports whether err is a Cluster's redirect, MOVED or ASK:
// the node does not own the slot (now).
func isRedirect(err error) bool {
	msg := replyText(err)
	return strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ")
}

// isExecAbort reports whether err is EXECABORT: Redis refused a command
// while queueing it and discarded the transaction.
func isExecAbort(err error) bool {
	return strings.HasPrefix(replyText(err), "EXECABORT")
}

// isNoPerm reports whether err is NOPERM: the ACL user may not run the
// command or use the key.
func isNoPerm(err error) bool {
	return strings.HasPrefix(replyText(err), "NOPERM")
}
