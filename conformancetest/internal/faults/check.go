package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/resp"
)

// Needs are what the faults of a schedule will ask of the Redis: the
// commands of their kinds.
type Needs struct {
	Pause, KillClients, Failover bool
}

// Check connects to every master of the target and sends PING, and then,
// for each command the faults need, sends that command with an argument
// Redis refuses (CLIENT PAUSE -1, CLIENT KILL ID 0, SENTINEL FAILOVER of
// a master no sentinel knows, CLUSTER FAILOVER with an option that does
// not exist): Redis checks a user's rights before a command's arguments,
// so the answer is NOPERM when the user may not send it, and an error
// of the argument, which changes nothing, when it may. So a schedule
// whose Redis cannot be reached, refuses the password or withholds a
// right fails before the run, within seconds, not in it. A failover also
// needs something to act on: a Sentinel, or a Cluster whose store slot
// (of the key prefix) has a replica.
func (t *Target) Check(ctx context.Context, need Needs, prefix string) error {
	if _, _, err := t.onMasters(ctx, "PING"); err != nil {
		return err
	}
	if need.Pause {
		if _, _, err := t.onMasters(ctx, "CLIENT", "PAUSE", "-1", "ALL"); denied(err) != nil {
			return err
		}
	}
	if need.KillClients {
		if _, _, err := t.onMasters(ctx, "CLIENT", "KILL", "ID", "0"); denied(err) != nil {
			return err
		}
	}
	if need.Failover {
		return t.checkFailover(ctx, prefix)
	}
	return nil
}

// checkFailover checks that a failover has something to act on, and
// that the user may ask for it (see Check).
func (t *Target) checkFailover(ctx context.Context, prefix string) error {
	switch t.Topology {
	case Single:
		return errors.New("redis-failover needs Sentinel (a URL with master_name=) or a Cluster; the URL names one node")
	case Sentinel:
		s, err := t.dialSentinel(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		// A name no sentinel monitors: "No such master" when the user
		// may fail over, NOPERM when not.
		probe := t.master + "-inventory-conformance-probe"
		if _, err := s.Do("SENTINEL", "FAILOVER", probe); denied(err) != nil {
			return fmt.Errorf("sentinel %s: SENTINEL FAILOVER: %w", s.Addr(), err)
		}
		return nil
	}
	sh, err := t.clusterReplica(ctx, prefix)
	if err != nil {
		return err
	}
	c, err := t.dial(ctx, sh.Replicas[0])
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Do("CLUSTER", "FAILOVER", "INVENTORY-CONFORMANCE-PROBE"); denied(err) != nil {
		return fmt.Errorf("%s: CLUSTER FAILOVER: %w", c.Addr(), err)
	}
	return nil
}

// denied returns err when it says that a probe was refused for want of a
// right (NOPERM) or got no answer (a broken connection, a time-out); nil
// when every Redis answered, be it with an error of the probe's
// arguments. err may join the errors of several masters.
func denied(err error) error {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var re resp.ReplyError
		if !errors.As(e, &re) || strings.HasPrefix(string(re), "NOPERM") {
			return err
		}
	}
	return nil
}
