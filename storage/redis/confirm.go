package redisstore

import (
	"context"
	"fmt"
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
// one pinned connection (pinned) and then WAITs on it (waitAcks), as a
// write with WithReplicaAcks runs its EXEC and WAIT on one.
//
// A log read that finds nothing after its cursor confirms nothing: the
// state at the cursor was confirmed when it was returned, so a
// read-mostly inventory pays no WAIT. A full read always confirms.

// pinned runs fn on one connection to the master of the store's slot,
// held for all of fn, so that a WAIT in fn (waitAcks) counts what fn's
// earlier commands wrote or read there: a Conn of the Client (single
// node or Sentinel) or of the Cluster's master of the slot; for another
// kind of client (a Ring), a connection held by WATCH of routeKey, a key
// no one writes, so that the WATCH never aborts fn's transaction. A
// pinned Conn never reconnects (go-redis's Conn fails "Conn is in a bad
// state" instead), so a WAIT cannot land on a new master's fresh
// connection, where it would confirm nothing. On a Cluster whose slot
// moved (MOVED or ASK: fn's commands were refused, a MULTI holding one
// is discarded), fn runs again through ClusterClient.Watch, which follows
// the redirect.
func (s *Store) pinned(ctx context.Context, fn func(c pinnedConn) error) error {
	c, err := s.txClient(ctx, s.routeKey)
	if err != nil {
		return err
	}
	if c != nil {
		conn := c.Conn()
		err = fn(conn)
		_ = conn.Close()
		if s.cluster == nil || !isRedirect(err) {
			return err
		}
	}
	return s.watch(ctx, func(tx *redis.Tx) error { return fn(tx) }, s.routeKey)
}

// pinnedConn is a connection pinned by pinned: a Conn or a Tx, which
// beyond Cmdable run WAIT (waiter) and any command (Do), as a client of
// many connections had better not.
type pinnedConn interface {
	redis.Cmdable
	waiter
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// readOn runs fn, a list's read, with the client it reads on: the store's
// client without WithReplicaAcks; with it, a pinned connection, on which
// it then WAITs (waitAcks) when fn says that what it read is to be
// confirmed (confirm: it found something to show).
func (s *Store) readOn(ctx context.Context, op string, fn func(c redis.Cmdable) (confirm bool, err error)) error {
	if s.acks == 0 {
		_, err := fn(s.client)
		return err
	}
	return s.pinned(ctx, func(c pinnedConn) error {
		confirm, err := fn(c)
		if err != nil || !confirm {
			return err
		}
		return s.waitAcks(ctx, c, op, ackRead)
	})
}

// waiter is a connection that can run WAIT (go-redis keeps it out of
// Cmdable, since it means something only on one connection).
type waiter interface {
	Wait(ctx context.Context, numReplicas int, timeout time.Duration) *redis.IntCmd
}

// acked is what a WAIT is to confirm: the state a list read, or a write.
type acked int

const (
	ackRead  acked = iota // a list: the state read is not shown unless confirmed
	ackWrite              // a write, after its EXEC: applied on the master whatever WAIT says
)

// unconfirmed says, for a list or a write, what it means for the client
// that the replicas did not acknowledge: the last clause of the error.
func (a acked) unconfirmed() string {
	if a == ackWrite {
		return "the write is applied on the master but not promised to survive a failover; retrying it is safe"
	}
	return "the state read is not yet held by enough replicas to survive a failover, so it is not shown; retry later"
}

// demoted says, for a list or a write, what a WAIT refused by a node no
// longer master means.
func (a acked) demoted() string {
	if a == ackWrite {
		return "the master was demoted to a replica (a failover under way) after the write's EXEC and before enough replicas acknowledged it: " +
			"the outcome is unknown (the new master may not hold the write); retrying it is safe"
	}
	return "the node read is a replica (a failover under way), so the state read cannot be confirmed"
}

// waitAcks runs WAIT on c, the pinned connection that just read the state
// a list is to show or ran a write's EXEC, when WithReplicaAcks asks for
// acknowledgements, and fails as unavailable (503 with Retry-After) when
// fewer replicas than it asks hold that state within its timeout, or when
// the node is no longer a master (isDemoted: a failover, or REPLICAOF,
// answers a blocked WAIT UNBLOCKED, and a replica refuses WAIT): for a
// write, the outcome is then unknown. WAIT counts the replicas that
// acknowledged everything this connection wrote or read (see above), so
// it must run on the connection of the read or the write.
func (s *Store) waitAcks(ctx context.Context, c waiter, op string, what acked) error {
	if s.acks == 0 {
		return nil
	}
	n, err := c.Wait(ctx, s.acks, s.ackTimeout).Result()
	if isDemoted(err) {
		return inventory.Unavailable(fmt.Errorf("redisstore: %s: %s: %w", op, what.demoted(), err))
	}
	if err != nil {
		return fmt.Errorf("WAIT %d %d after the %s: %w", s.acks, s.ackTimeout.Milliseconds(), op, err)
	}
	if n < int64(s.acks) {
		s.ackShortfalls.Add(1)
		return inventory.Unavailable(fmt.Errorf(
			"redisstore: %s: %d of the %d replica acknowledgements asked for (WithReplicaAcks) arrived within %v: %s",
			op, n, s.acks, s.ackTimeout, what.unconfirmed()))
	}
	return nil
}
