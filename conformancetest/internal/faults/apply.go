package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FailoverLimit bounds the wait for a failover's new master to be
// announced: a failover not done by then cannot be judged.
const FailoverLimit = 30 * time.Second

// Check connects to every master of the target and sends PING, so that a
// schedule whose Redis cannot be reached, or refuses the password, fails
// before the run rather than in it. With failover set, it also checks
// that a failover has something to act on: a Sentinel, or a Cluster
// whose store slot (of the key prefix) has a replica.
func (t *Target) Check(ctx context.Context, failover bool, prefix string) error {
	if _, _, err := t.onMasters(ctx, "PING"); err != nil {
		return err
	}
	if !failover {
		return nil
	}
	switch t.Topology {
	case Single:
		return errors.New("redis-failover needs Sentinel (a URL with master_name=) or a Cluster; the URL names one node")
	case Cluster:
		_, err := t.clusterReplica(ctx, prefix)
		return err
	}
	return nil
}

// onMasters sends one command to every master, each over a connection of
// its own, at once (so that a Cluster's masters pause together), and
// returns their replies.
func (t *Target) onMasters(ctx context.Context, args ...string) ([]any, []string, error) {
	masters, err := t.Masters(ctx)
	if err != nil {
		return nil, nil, err
	}
	conns := make([]*Conn, len(masters))
	for i, m := range masters {
		if conns[i], err = t.dial(ctx, m); err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, nil, err
		}
	}
	replies, errs := make([]any, len(conns)), make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			defer c.Close()
			replies[i], errs[i] = c.Do(args...)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %s: %w", c.Addr(), strings.Join(args[:min(2, len(args))], " "), errs[i])
			}
		})
	}
	wg.Wait()
	return replies, masters, errors.Join(errs...)
}

// Pause pauses every client of every master for d (CLIENT PAUSE ms ALL:
// reads and writes alike) and returns what it did in words.
func (t *Target) Pause(ctx context.Context, d time.Duration) (string, error) {
	_, masters, err := t.onMasters(ctx, "CLIENT", "PAUSE", strconv.FormatInt(d.Milliseconds(), 10), "ALL")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("paused %s for %v", strings.Join(masters, " "), d), nil
}

// KillClients closes every normal client connection of every master but
// its own (CLIENT KILL TYPE normal SKIPME yes) and returns what it did
// in words, and how many it closed.
func (t *Target) KillClients(ctx context.Context) (string, int64, error) {
	replies, masters, err := t.onMasters(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	if err != nil {
		return "", 0, err
	}
	var n int64
	for _, r := range replies {
		k, _ := r.(int64)
		n += k
	}
	return fmt.Sprintf("%d client connections of %s closed", n, strings.Join(masters, " ")), n, nil
}

// Failover makes a replica the master: SENTINEL FAILOVER on a sentinel,
// or CLUSTER FAILOVER on a replica of the master that owns the store's
// slot (of prefix) in a Cluster. It returns once the new master is
// announced (by the sentinels, or in CLUSTER SLOTS), within
// FailoverLimit, and says which it is.
func (t *Target) Failover(ctx context.Context, prefix string) (string, error) {
	switch t.Topology {
	case Sentinel:
		s, err := t.dialSentinel(ctx)
		if err != nil {
			return "", err
		}
		defer s.Close()
		old, err := masterAddr(s, t.master)
		if err != nil {
			return "", err
		}
		if _, err := s.Do("SENTINEL", "FAILOVER", t.master); err != nil {
			return "", fmt.Errorf("sentinel %s: SENTINEL FAILOVER %s: %w", s.Addr(), t.master, err)
		}
		return t.await(ctx, old, func() (string, error) { return masterAddr(s, t.master) })
	case Cluster:
		sh, err := t.clusterReplica(ctx, prefix)
		if err != nil {
			return "", err
		}
		c, err := t.dial(ctx, sh.Replicas[0])
		if err != nil {
			return "", err
		}
		_, err = c.Do("CLUSTER", "FAILOVER")
		c.Close()
		if err != nil {
			return "", fmt.Errorf("%s: CLUSTER FAILOVER: %w", sh.Replicas[0], err)
		}
		slot := StoreSlot(prefix)
		return t.await(ctx, sh.Master, func() (string, error) {
			shards, err := t.ClusterShards(ctx)
			if err != nil {
				return "", err
			}
			s, _ := shardOf(shards, slot)
			return s.Master, nil
		})
	}
	return "", errors.New("redis-failover needs Sentinel (a URL with master_name=) or a Cluster; the URL names one node")
}

// await polls master until it names another than old.
func (t *Target) await(ctx context.Context, old string, master func() (string, error)) (string, error) {
	deadline := time.Now().Add(FailoverLimit)
	var last error
	for time.Now().Before(deadline) {
		m, err := master()
		if err == nil && m != "" && m != old {
			return fmt.Sprintf("master %s replaced by %s", old, m), nil
		}
		last = err
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	if last != nil {
		return "", fmt.Errorf("no new master announced within %v (the last answer: %v)", FailoverLimit, last)
	}
	return "", fmt.Errorf("no new master announced within %v: still %s", FailoverLimit, old)
}

// clusterReplica returns the shard that owns the store's slot, which
// has a replica to fail over to.
func (t *Target) clusterReplica(ctx context.Context, prefix string) (Shard, error) {
	shards, err := t.ClusterShards(ctx)
	if err != nil {
		return Shard{}, err
	}
	slot := StoreSlot(prefix)
	sh, ok := shardOf(shards, slot)
	switch {
	case !ok:
		return Shard{}, fmt.Errorf("no master owns slot %d (of the key prefix %q)", slot, prefix)
	case len(sh.Replicas) == 0:
		return Shard{}, fmt.Errorf("master %s of slot %d (of the key prefix %q) has no replica to fail over to", sh.Master, slot, prefix)
	}
	return sh, nil
}

// ExecTail is how many last lines of a command's output Exec keeps.
const ExecTail = 5

// Exec runs command with sh -c, stopped after limit, and returns its
// exit status and the last ExecTail lines of its output (stdout and
// stderr together). err is set when it did not run, ran out of time or
// exited other than 0.
func Exec(ctx context.Context, command string, limit time.Duration) (status int, tail string, err error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	tail = lastLines(out.String(), ExecTail)
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return -1, tail, fmt.Errorf("still running after its time limit of %v: stopped", limit)
	case errors.As(err, &ee):
		return ee.ExitCode(), tail, fmt.Errorf("exited with status %d", ee.ExitCode())
	case err != nil:
		return -1, tail, err
	}
	return 0, tail, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
