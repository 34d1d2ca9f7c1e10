package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// The consistency check raises no false alarm against the repository's
// own server: three examples/redis processes (Gin, Fiber, Gin) on one
// real Redis, as a deployment's replicas, while Redis is healthy, while
// every client connection of it is killed twice a second, and through
// failovers of a Sentinel set and a Cluster whose replicas lag 50 ms (with
// -replica-acks 1, and without as the negative control).

// built holds the binaries built once per test binary, by package.
var built sync.Map // package → *buildOnce

type buildOnce struct {
	once sync.Once
	path string
	err  error
}

// buildBinary builds the Go package pkg (a path as go build takes it,
// from the repository's root) once per test binary, as a user builds it,
// and returns the binary's path.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := built.LoadOrStore(pkg, &buildOnce{})
	b := v.(*buildOnce)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "e2e-build")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// exampleServer is examples/redis, built once.
func exampleServer(t *testing.T) string { return buildBinary(t, "./examples/redis") }

// commandBinary is inventory-conformance, built once, without the race
// detector (which would slow its checker tenfold).
func commandBinary(t *testing.T) string {
	return buildBinary(t, "./conformancetest/cmd/inventory-conformance")
}

// replica is one running examples/redis process.
type replica struct {
	base string // http://127.0.0.1:PORT/v1
	srv  *proctest.Server
}

// startReplicas runs one examples/redis process per framework on
// redisURL, all with the key prefix prefix (one inventory), and waits
// until each answers /readyz 200. They are stopped when the test ends.
func startReplicas(t *testing.T, redisURL, prefix string, frameworks []string, args ...string) []replica {
	t.Helper()
	bin := exampleServer(t)
	var out []replica
	for _, fw := range frameworks {
		srv := proctest.Start(t, bin, testKey, []string{"REDIS_URL=" + redisURL, "INVENTORY_API_KEYS=" + testKey},
			append([]string{"-framework", fw, "-redis-prefix", prefix}, args...))
		for deadline := time.Now().Add(30 * time.Second); ; {
			if resp, err := http.Get(srv.Base + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if exited, err := srv.Wait(50 * time.Millisecond); exited { // polling /readyz, bounded by the deadline
				t.Fatalf("examples/redis -framework %s exited at start (%v):\n%s", fw, err, srv.Logs.String())
			}
			if time.Now().After(deadline) {
				t.Fatalf("examples/redis -framework %s: /readyz not 200 in 30s:\n%s", fw, srv.Logs.String())
			}
		}
		out = append(out, replica{base: srv.Base + "/v1", srv: srv})
	}
	return out
}

func bases(rs []replica) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.base)
	}
	return out
}

// threeFrameworks are the replicas of the runs: Gin, Fiber, Gin.
var threeFrameworks = []string{"gin", "fiber", "gin"}

// consistencyCmd runs the inventory-conformance command (built without
// the race detector, which would slow its checker tenfold) for d against
// bases, and returns its result: consistency/linearizable's outcome and
// result, read from the JSON report.
func consistencyCmd(t *testing.T, bases []string, d time.Duration) (outcome string, lin conformancetest.Result, res cmdResult) {
	t.Helper()
	res = runCmd(t, commandBinary(t), consistencyArgs(d, bases)...)
	outcome, lin = linearizable(t, res.stdout)
	t.Logf("exit %d, %s: %s", res.code, outcome, lin.Detail)
	return outcome, lin, res
}

// consistencyArgs are the inventory-conformance arguments of a
// consistency run of d against bases, then extra: the report is JSON,
// which the tests read the verdict from (its kinds and counts, not its
// words).
func consistencyArgs(d time.Duration, bases []string, extra ...string) []string {
	args := []string{"-json", "-run", "^consistency/", "-consistency", d.String()}
	for _, b := range bases {
		args = append(args, "-base-url", b)
	}
	return append(args, extra...)
}

// linearizable reads consistency/linearizable's result from the
// command's JSON report, and its outcome as the text report prints it
// (PASS, FAIL or SKIP; "" when the report holds no such result).
func linearizable(t *testing.T, stdout string) (outcome string, res conformancetest.Result) {
	t.Helper()
	var rep conformancetest.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Logf("the command's report is not JSON (%v):\n%s", err, stdout)
		return "", res
	}
	res, ok := rep.Result("consistency/linearizable")
	if !ok {
		return "", res
	}
	return strings.ToUpper(string(res.Outcome)), res
}

// kindsOf are the kinds of res's failures, in order.
func kindsOf(res conformancetest.Result) []string {
	var out []string
	for _, f := range res.Failures {
		out = append(out, f.Kind)
	}
	return out
}

// updateFigures says how many updates a run sent and how many were of
// unknown outcome, for the summary lines ("" when the result has no
// figures).
func updateFigures(res conformancetest.Result) string {
	if c := res.Consistency; c != nil {
		return fmt.Sprintf(", %d updates (%d of unknown outcome)", c.Updates, c.UnknownUpdates)
	}
	return ""
}

// redisFor returns a Redis for one test: a redis-server of its own.
func redisFor(t *testing.T) *redistest.Node {
	return redistest.StartNode(t, "consistency")
}

// consistencyLong is how long the runs against examples/redis last.
const consistencyLong = 60 * time.Second

func TestConsistencyRedisReplicas(t *testing.T) {
	proctest.Long(t)
	node := redisFor(t)
	rs := startReplicas(t, "redis://"+node.Addr()+"/0", "e2e-consistency", threeFrameworks)
	if outcome, _, res := consistencyCmd(t, bases(rs), consistencyLong); outcome != "PASS" || res.code != 0 {
		t.Fatalf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestConsistencyRedisClientsKilled(t *testing.T) {
	proctest.Long(t)
	node := redisFor(t)
	rs := startReplicas(t, "redis://"+node.Addr()+"/0", "e2e-consistency-kill", threeFrameworks)
	stop := make(chan struct{})
	var (
		wg     sync.WaitGroup
		killed int
		kills  int
	)
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			// CLIENT KILL skips the connection that sends it.
			if v, err := node.Do("CLIENT", "KILL", "TYPE", "normal"); err == nil {
				if n, ok := v.(int64); ok {
					killed += int(n)
					kills++
				}
			}
		}
	})
	outcome, lin, res := consistencyCmd(t, bases(rs), consistencyLong)
	close(stop)
	wg.Wait()
	t.Logf("%d CLIENT KILL TYPE normal, %d connections killed", kills, killed)
	if killed == 0 {
		t.Fatal("no client connection was killed: the test proves nothing")
	}
	if outcome != "PASS" || res.code != 0 {
		t.Fatalf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("the run%s", updateFigures(lin))
}

// failoverLag is the replication lag of the failover runs: each replica
// of the Sentinel set replicates through a proxy that delays the stream
// this much each way, as production replicas lag by milliseconds or more.
const failoverLag = 50 * time.Millisecond

// lostWrite are the kinds of failure that name an answered write lost (a
// list missed it) or a shown write taken back: the negative control must
// fail for that reason, not another.
var lostWrite = []string{conformancetest.KindMissedUpdate, conformancetest.KindWriteTakenBack}

// waitIntoRun waits until a list through base shows a write of the
// consistency run (waitForRunWrite), then until d has passed since, and
// returns when the run's first write was seen: the command starts writing
// a moment after it starts, so times of the run count from there.
func waitIntoRun(t *testing.T, base string, d time.Duration) time.Time {
	t.Helper()
	waitForRunWrite(t, base, 30*time.Second)
	first := time.Now()
	time.Sleep(d) // a point of the run to kill at, not a wait for a state
	return first
}

// waitForRunWrite waits, at most within, until a list through base shows
// a write of the consistency run: one of its quantities, which start at
// 1 000 000 (in an inventory of the test's own prefix).
func waitForRunWrite(t *testing.T, base string, within time.Duration) {
	t.Helper()
	err := redistest.Poll(within, func() error {
		resp, err := http.DefaultClient.Do(authorized(t, base+"/inventory"))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var items []struct{ Quantity int64 }
		if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
			return err
		}
		if !slices.ContainsFunc(items, func(it struct{ Quantity int64 }) bool { return it.Quantity >= 1_000_000 }) {
			return errors.New("no write of the run shows yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConsistencyRedisSentinelFailover runs the consistency check through
// three processes (Gin, Fiber, Gin) on a Sentinel set whose replicas lag
// 50 ms, and kills the master with SIGKILL about 6 s into a 16 s run (the
// bytes on their way to the replicas lost with it).
//
// With -replica-acks 1 the run must be linearizable: an update answers
// 200 only once a replica holds it, and a list shows only a state that a
// replica holds, so the promoted replica (Sentinel picks the one furthest
// in the replication stream) takes back nothing a client saw. With
// -replica-acks 0 (the negative control) the check must fail, naming a
// write that was lost or taken back: without acknowledgements a failover
// loses what the master had not yet sent.
func TestConsistencyRedisSentinelFailover(t *testing.T) {
	proctest.Long(t)
	for _, acks := range []int{1, 0} {
		t.Run(fmt.Sprintf("acks=%d", acks), func(t *testing.T) {
			outcome, lin, res := sentinelFailoverRun(t, acks)
			if acks > 0 {
				if outcome == "PASS" && res.code == 0 {
					return
				}
				t.Fatalf("with -replica-acks %d the run must be linearizable through the failover; exit %d:\n%s%s", acks, res.code, res.stdout, res.stderr)
			}
			if outcome != "FAIL" || res.code == 0 {
				t.Fatalf("negative control: with -replica-acks 0 and %v of lag the failover must lose a write the check sees (exit %d, %s):\n%s%s", failoverLag, res.code, outcome, res.stdout, res.stderr)
			}
			if kinds := kindsOf(lin); len(kinds) == 0 || !slices.Contains(lostWrite, kinds[0]) {
				t.Fatalf("negative control: the check failed, of kinds %q, but not first of one of %q (no lost or taken-back write):\n%s", kinds, lostWrite, res.stdout)
			}
		})
	}
}

// sentinelFailoverRun is one run of TestConsistencyRedisSentinelFailover:
// it waits for states (a write of the run shown, the promotion, every
// process ready again), never for fixed times, except the point of the
// run at which the master is killed. It prints one summary line.
func sentinelFailoverRun(t *testing.T, acks int) (outcome string, lin conformancetest.Result, res cmdResult) {
	const (
		run    = 16 * time.Second
		killAt = 6 * time.Second
	)
	set := redistest.StartSentinel(t, redistest.SentinelOptions{ReplicaLag: failoverLag})
	addrs := set.SentinelAddrs()
	url := "redis://" + addrs[0] + "?master_name=" + set.MasterName
	for _, a := range addrs[1:] {
		url += "&addr=" + a
	}
	rs := startReplicas(t, url, "e2e-consistency-sentinel", threeFrameworks,
		"-replica-acks", strconv.Itoa(acks), "-replica-ack-timeout", "2s", "-store-timeout", "4s")
	old := set.Master()
	if err := set.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	all := bases(rs)
	cmd, stdout, stderr := start(t, commandBinary(t), consistencyArgs(run, all)...)
	runAt := waitIntoRun(t, all[0], killAt)
	delay, err := set.ReplicationDelay()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range set.Proxies {
		p.Sever() // the master's host goes down: the stream in flight is lost
	}
	old.Kill()
	killedAt := time.Since(runAt)
	promoted := set.WaitFailover(old, redistest.SentinelPromotedWithin)
	promotedAt := time.Since(runAt)
	err = redistest.Poll(run, func() error {
		for _, r := range rs {
			resp, err := http.Get(strings.TrimSuffix(r.base, "/v1") + "/readyz")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s/readyz answered %d", r.base, resp.StatusCode)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("after the failover to %s: %v", promoted.Name, err)
	}
	readyAt := time.Since(runAt)
	// The other replica is told to replicate from the promoted master: until
	// it streams, an update with -replica-acks 1 cannot be acknowledged.
	err = redistest.Poll(run, func() error {
		for _, n := range set.Replicas() {
			port, err := n.Info("replication", "master_port")
			if err != nil {
				return err
			}
			link, _ := n.Info("replication", "master_link_status")
			if port != strconv.Itoa(promoted.Port) || link != "up" {
				return fmt.Errorf("%s replicates from port %s (link %s), not yet from %s", n.Name, port, link, promoted.Name)
			}
		}
		return nil
	})
	if err != nil {
		var logs strings.Builder
		for _, n := range append(append([]*redistest.Node{}, set.Data...), set.Sentinels...) {
			fmt.Fprintf(&logs, "--- %s:\n%s\n", n.Name, lastLines(n.Log(), 30))
		}
		t.Fatalf("after the failover to %s: %v\n%s", promoted.Name, err, logs.String())
	}
	rejoinedAt := time.Since(runAt)
	res = wait(t, cmd, stdout, stderr)
	// The promotion must have held through the run: a sentinel that judged
	// the promoted master down would have failed it over again, to a node
	// with no replica left, so that updates answer 503 from then on.
	if down := set.JudgedDown(promoted); len(down) > 0 {
		t.Errorf("a sentinel judged the promoted master %s down:\n%s", promoted.Name, strings.Join(down, "\n"))
	}
	if now := set.Master(); now != promoted {
		t.Errorf("the sentinels failed over again during the run, from %s to %s", promoted.Name, now.Name)
	}
	outcome, lin = linearizable(t, res.stdout)
	figures := updateFigures(lin)
	proctest.Summary(t, "FAILOVER_SUMMARY", "consistency sentinel lag=%v (a write reached the replicas in %v) acks=%d: %s (exit %d); master killed %.1fs into the %v run, %s promoted at %.1fs, all 3 processes ready at %.1fs, the other replica streaming from it at %.1fs%s",
		failoverLag, delay.Round(time.Millisecond), acks, outcome, res.code, killedAt.Seconds(), run, promoted.Name, promotedAt.Seconds(), readyAt.Seconds(), rejoinedAt.Seconds(), figures)
	t.Logf("consistency/linearizable: %s", lin.Detail)
	if outcome != "PASS" {
		for _, n := range append(append([]*redistest.Node{}, set.Data...), set.Sentinels...) {
			if !n.Alive() {
				continue
			}
			repl, _ := n.DoString("INFO", "replication")
			t.Logf("%s after the run:\n%s\nits log:\n%s", n.Name, repl, lastLines(n.Log(), 25))
		}
	}
	return outcome, lin, res
}

// TestConsistencyRedisClusterFailover runs the consistency check with
// -replica-acks 1 through three processes (Gin, Fiber, Gin) on a 6-node
// Cluster (one replica per master) whose replicas lag 50 ms, and kills the
// master that owns the store about 6 s into a 20 s run, the stream in
// flight to its replica lost. The run must be linearizable.
//
// It also measures what one replica per master costs: the promoted master
// has no replica, so an update (of a pet the run does not use) answers 503
// until one rejoins. The old master is restarted 2 s after the promotion,
// as an orchestrator would; it rejoins as the new master's replica, and
// the probe's first 200 after that ends the outage the summary line
// prints.
func TestConsistencyRedisClusterFailover(t *testing.T) {
	proctest.Long(t)
	const (
		run        = 20 * time.Second
		killAt     = 6 * time.Second
		noReplica  = 2 * time.Second // how long the promoted master is left without a replica
		probePet   = "12"            // a pet of the demo inventory the run does not update
		probeEvery = 50 * time.Millisecond
	)
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{ReplicaLag: failoverLag})
	slot := c.KeySlot("{e2e-consistency-cluster}:items")
	master := c.MasterOf(slot)
	others, _ := c.Others(slot)
	url := "redis://" + master.Addr()
	for i, n := range others {
		url += map[bool]string{true: "?", false: "&"}[i == 0] + "addr=" + n.Addr()
	}
	rs := startReplicas(t, url, "e2e-consistency-cluster", threeFrameworks,
		"-replica-acks", "1", "-replica-ack-timeout", "500ms")
	if err := c.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	all := bases(rs)
	cmd, stdout, stderr := start(t, commandBinary(t), consistencyArgs(run, all)...)
	runAt := waitIntoRun(t, all[0], killAt)
	c.Sever(master)
	master.Kill()
	killedAt := time.Since(runAt)
	promoted := c.WaitPromoted(slot, master, 30*time.Second)
	promotedAt := time.Since(runAt)

	// The promoted master has no replica: every update answers 503.
	probe := func() (int, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, all[0]+"/inventory/"+probePet, strings.NewReader(`{"quantity":7}`))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	lonely, refused := 0, 0
	for until := time.Now().Add(noReplica); time.Now().Before(until); time.Sleep(probeEvery) {
		st, err := probe()
		if err != nil {
			t.Fatal(err)
		}
		lonely++
		if st == http.StatusServiceUnavailable {
			refused++
		} else if st == http.StatusOK {
			t.Errorf("an update answered 200 while the promoted master %s had no replica to acknowledge it", promoted.Name)
		}
	}
	master.Restart()
	restartedAt := time.Since(runAt)
	var firstOK time.Duration
	err := redistest.Poll(run, func() error {
		st, err := probe()
		if err != nil {
			return err
		}
		if st != http.StatusOK {
			return fmt.Errorf("the probe update answered %d", st)
		}
		firstOK = time.Since(runAt)
		return nil
	})
	if err != nil {
		t.Fatalf("after %s restarted: %v", master.Name, err)
	}
	res := wait(t, cmd, stdout, stderr)
	outcome, lin := linearizable(t, res.stdout)
	figures := updateFigures(lin)
	proctest.Summary(t, "FAILOVER_SUMMARY", "consistency cluster lag=%v acks=1: %s (exit %d); master killed %.1fs into the %v run, %s promoted at %.1fs; without a replica %d of %d probe updates answered 503 over %v; old master restarted at %.1fs, updates answered 200 again at %.1fs (%.1fs after the promotion)%s",
		failoverLag, outcome, res.code, killedAt.Seconds(), run, promoted.Name, promotedAt.Seconds(), refused, lonely, noReplica,
		restartedAt.Seconds(), firstOK.Seconds(), (firstOK - promotedAt).Seconds(), figures)
	if refused != lonely {
		t.Errorf("%d of %d updates answered 503 while the promoted master had no replica; want every one", refused, lonely)
	}
	if res.code != 0 || outcome != "PASS" {
		t.Fatalf("with -replica-acks 1 the run must be linearizable through the failover; exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// authorized is a GET of url with the test key.
func authorized(t *testing.T, url string) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	return req
}
