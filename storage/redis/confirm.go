package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// With WithReplicaAcks(n, …), a list shows only a state that n replicas
// hold, so that a failover to one of them never takes back what a list
// showed (a write applied on the master whose own WAIT failed, answered
// 503, is otherwise visible to lists until the master dies with it).
//
// Redis's WAIT counts the replicas that acknowledged the replication
// offset the connection it runs on last saw: every command, a read too,
// sets that offset to the master's, so a WAIT after a read on the same
// connection waits for everything the read could see. On a connection
// that has sent nothing, WAIT answers at once (measured on Redis 7.0.15:
// with the replica stopped, GET then WAIT 1 500 waits and answers 0, a
// WAIT alone on a new connection answers 1 at once). So a list reads on
// one pinned connection (readOn) and then WAITs on it (confirm): a pinned
// connection never reconnects (go-redis's Conn fails "Conn is in a bad
// state" instead), so the WAIT cannot land on a new master's fresh
// connection, where it would confirm nothing.
//
// A log read that finds nothing after its cursor confirms nothing: the
// state at the cursor was confirmed when it was returned, so a
// read-mostly inventory pays no WAIT. A full read always confirms.

// readOn runs fn with the client a list reads on. Without
// WithReplicaAcks it is the store's client. With it, fn gets one pinned
// connection to the master of the store's slot, for its reads and the
// WAIT that confirms them: a Conn of the Client (single node or
// Sentinel) or of the Cluster's master of the slot; for another kind of
// client (a Ring), a connection held by WATCH of a key no one writes, as
// exec holds one.
func (s *Store) readOn(ctx context.Context, fn func(c redis.Cmdable) error) error {
	if s.acks == 0 {
		return fn(s.client)
	}
	c, err := s.txClient(ctx, s.logKey)
	if err != nil {
		return err
	}
	if c == nil {
		return s.watch(ctx, func(tx *redis.Tx) error { return fn(tx) }, s.routeKey)
	}
	conn := c.Conn()
	defer conn.Close()
	return fn(conn)
}

// waiter is a connection that can run WAIT (go-redis keeps it out of
// Cmdable, since it means something only on one connection).
type waiter interface {
	Wait(ctx context.Context, numReplicas int, timeout time.Duration) *redis.IntCmd
}

// confirm runs WAIT on c, the connection that read the state a list is
// to show, right after the read, and fails as unavailable when fewer
// replicas than WithReplicaAcks asks hold that state within its timeout:
// the state is then not shown (a list answers 503 with Retry-After).
// Without WithReplicaAcks it does nothing.
func (s *Store) confirm(ctx context.Context, c redis.Cmdable, op string) error {
	if s.acks == 0 {
		return nil
	}
	w, ok := c.(waiter)
	if !ok { // readOn gives a Conn or a Tx, which have WAIT
		return fmt.Errorf("redisstore: %s: cannot WAIT on a %T", op, c)
	}
	n, err := w.Wait(ctx, s.acks, s.ackTimeout).Result()
	if err != nil && isReply(err) && strings.Contains(err.Error(), "replica") {
		// "WAIT cannot be used with replica instances": the read reached a
		// replica (a master demoted by a failover), whose state no
		// acknowledgement covers.
		return inventory.Unavailable(fmt.Errorf(
			"redisstore: %s: the node read is a replica (a failover under way), so the state read cannot be confirmed: %w", op, err))
	}
	if err != nil {
		return fmt.Errorf("WAIT %d %d after the %s: %w", s.acks, s.ackTimeout.Milliseconds(), op, err)
	}
	if n < int64(s.acks) {
		s.ackShortfalls.Add(1)
		return inventory.Unavailable(fmt.Errorf(
			"redisstore: %s: %d of the %d replica acknowledgements asked for (WithReplicaAcks) arrived within %v: the state read is not yet held by enough replicas to survive a failover, so it is not shown; retry later",
			op, n, s.acks, s.ackTimeout))
	}
	return nil
}
