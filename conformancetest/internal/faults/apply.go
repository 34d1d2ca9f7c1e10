package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FailoverLimit bounds the wait for a failover's new master to be
// announced: a failover not done by then cannot be judged.
const FailoverLimit = 30 * time.Second

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

// ExecGrace is how long the processes of an exec fault that is ended
// have, after SIGTERM, before SIGKILL.
const ExecGrace = 2 * time.Second

// Exec runs command with sh -c in a process group of its own and returns
// its exit status and the last ExecTail lines of its output (stdout and
// stderr together, of every process of the group). It returns once the
// command and every process it started in its group have exited: a
// command that leaves a process running in the background lasts until
// that process ends. At its time limit, or when ctx ends (the suite
// interrupted), the whole group is ended: SIGTERM, then SIGKILL to what
// is left after ExecGrace; Exec returns only once none of it runs, so
// nothing the command started outlives it. (A process that leaves the
// group, with setsid, is its own; on systems without process groups only
// the shell is ended.) err is set when the command did not run, ran out
// of time, was interrupted (wrapping ctx's error) or exited other than 0.
func Exec(ctx context.Context, command string, limit time.Duration) (status int, tail string, err error) {
	return execGroup(ctx, command, limit, ExecGrace)
}

// execGroup is Exec with the grace before SIGKILL.
func execGroup(ctx context.Context, command string, limit, grace time.Duration) (int, string, error) {
	// The output goes through a pipe of our own, not os/exec's copying:
	// Wait then returns when the shell exits, and the processes it
	// left keep writing until their group is done.
	r, w, err := os.Pipe()
	if err != nil {
		return -1, "", err
	}
	defer r.Close()
	var out tailBuffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, r)
		close(copied)
	}()
	cmd := exec.Command("sh", "-c", command)
	cmd.Stdout, cmd.Stderr = w, w
	ownGroup(cmd)
	err = cmd.Start()
	w.Close()
	if err != nil {
		return -1, "", err
	}
	g := group{pid: cmd.Process.Pid, proc: cmd.Process}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	res := g.watch(ctx, waited, limit)
	if res.stop != nil {
		res.ended, res.endErr = g.end(grace)
		if !res.exited {
			res.werr = <-waited
		}
	}
	// What the group wrote is read once it is gone; a process that left
	// it is not waited for.
	select {
	case <-copied:
	case <-time.After(grace):
	}
	return res.outcome(lastLines(out.String(), ExecTail))
}

// execResult is what became of an exec fault's command: the shell's Wait
// error and whether it exited, why its group was ended (nil when it
// ended on its own), how, and whether that failed.
type execResult struct {
	werr   error
	exited bool
	stop   error
	ended  string
	endErr error
}

// outcome is the exit status and error Exec returns.
func (res execResult) outcome(tail string) (int, string, error) {
	status := -1
	var ee *exec.ExitError
	if res.exited && errors.As(res.werr, &ee) {
		status = ee.ExitCode()
	} else if res.exited && res.werr == nil {
		status = 0
	}
	switch {
	case res.stop != nil && res.endErr != nil:
		return status, tail, fmt.Errorf("%w: %s, but %v", res.stop, res.ended, res.endErr)
	case res.stop != nil:
		return status, tail, fmt.Errorf("%w: %s", res.stop, res.ended)
	case status > 0:
		return status, tail, fmt.Errorf("exited with status %d", status)
	case res.werr != nil:
		return -1, tail, res.werr
	}
	return 0, tail, nil
}

// groupPoll is how often the processes of an exec fault's group are
// looked for.
const groupPoll = 20 * time.Millisecond

// killWait bounds the wait for a group to be gone after SIGKILL (a
// process in an uninterruptible sleep takes a moment).
const killWait = 5 * time.Second

// group is the process group of an exec fault: the shell's, which it
// leads.
type group struct {
	pid  int
	proc *os.Process
}

// watch waits until the shell has exited and no process of its group is
// left, the time limit passes or ctx ends (then stop says which).
func (g group) watch(ctx context.Context, waited <-chan error, limit time.Duration) execResult {
	var res execResult
	timer := time.NewTimer(limit)
	defer timer.Stop()
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for {
		select {
		case res.werr = <-waited:
			res.exited, waited = true, nil
		case <-tick.C:
		case <-timer.C:
			res.stop = fmt.Errorf("still running after its time limit of %v", limit)
			if res.exited {
				res.stop = fmt.Errorf("it exited, but processes it started were still running after its time limit of %v", limit)
			}
			return res
		case <-ctx.Done():
			res.stop = fmt.Errorf("interrupted: %w", ctx.Err())
			return res
		}
		if res.exited && !g.alive() {
			return res
		}
	}
}

// end ends every process of the group: SIGTERM, then SIGKILL after
// grace. It says how, and returns an error when some are still running
// killWait after SIGKILL.
func (g group) end(grace time.Duration) (string, error) {
	g.signal(false)
	if g.gone(grace) {
		return "its process group ended (SIGTERM)", nil
	}
	g.signal(true)
	how := fmt.Sprintf("its process group ended (SIGTERM, then SIGKILL %v later)", grace)
	if g.gone(killWait) {
		return how, nil
	}
	return how, fmt.Errorf("processes of its group %d were still running %v after SIGKILL", g.pid, killWait)
}

// gone waits, polling, until no process of the group is left, for at
// most within; it reports whether none is.
func (g group) gone(within time.Duration) bool {
	deadline := time.Now().Add(within)
	for g.alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(groupPoll)
	}
	return true
}

// tailBuffer keeps the last tailBytes bytes written to it, for the last
// lines of a command's output, whatever it writes.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

const tailBytes = 64 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if n := len(t.b); n > 2*tailBytes {
		t.b = append(t.b[:0], t.b[n-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b[max(0, len(t.b)-tailBytes):])
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
