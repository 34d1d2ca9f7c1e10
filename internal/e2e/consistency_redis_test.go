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
	t.Parallel() // its verdict is of correctness alone: a correct deployment passes however loaded the machine
	node := redisFor(t)
	rs := startReplicas(t, "redis://"+node.Addr()+"/0", "e2e-consistency", threeFrameworks)
	if outcome, _, res := consistencyCmd(t, bases(rs), consistencyLong); outcome != "PASS" || res.code != 0 {
		t.Fatalf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// killRun is the schedule of TestConsistencyRedisClientsKilled: every
// client connection of Redis killed each second of a 10 s run.
const killRun = 10 * time.Second

func TestConsistencyRedisClientsKilled(t *testing.T) {
	proctest.Long(t)
	node := redisFor(t)
	redisURL := "redis://" + node.Addr() + "/0"
	rs := startReplicas(t, redisURL, "e2e-consistency-kill", threeFrameworks)
	extra := []string{"-consistency-redis", redisURL}
	for at := time.Second; at < killRun; at += time.Second {
		extra = append(extra, "-consistency-fault", at.String()+" redis-kill-clients")
	}
	res := runCmd(t, commandBinary(t), consistencyArgs(killRun, bases(rs), extra...)...)
	outcome, lin := linearizable(t, res.stdout)
	faults := faultsOf(t, lin)
	var killed int64
	for _, f := range faults {
		if f.Closed != nil {
			killed += *f.Closed
		}
	}
	if len(faults) != int(killRun/time.Second)-1 {
		t.Fatalf("%d faults in the report, want one per fault given:\n%s%s", len(faults), res.stdout, res.stderr)
	}
	if killed == 0 {
		t.Fatalf("no client connection was killed: the test proves nothing:\n%s", res.stdout)
	}
	if outcome != "PASS" || res.code != 0 {
		t.Fatalf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("%d connections killed%s", killed, updateFigures(lin))
}

// faultsOf are the faults of the schedule in the result, each logged in
// the report's words.
func faultsOf(t *testing.T, lin conformancetest.Result) []conformancetest.FaultResult {
	t.Helper()
	if lin.Consistency == nil {
		return nil
	}
	for _, f := range lin.Consistency.Faults {
		t.Log(f.Line())
	}
	return lin.Consistency.Faults
}

// failoverLag is the replication lag of the failover runs: each replica
// of the Sentinel set replicates through a proxy that delays the stream
// this much each way, as production replicas lag by milliseconds or more.
const failoverLag = 50 * time.Millisecond

// lostWrite are the kinds of failure that name an answered write lost (a
// list missed it) or a shown write taken back: the negative control must
// fail for that reason, not another.
var lostWrite = []string{conformancetest.KindMissedUpdate, conformancetest.KindWriteTakenBack}

// TestConsistencyRedisSentinelFailover runs the consistency check through
// three processes (Gin, Fiber, Gin) on a Sentinel set whose replicas lag
// 50 ms, and has the suite's fault schedule kill the master with SIGKILL
// 6 s into a 16 s run ("6s exec kill -9 PID"; the bytes on their way to
// the replicas lost with it), or fail it over gracefully
// ("6s redis-failover" through -consistency-redis).
//
// With -replica-acks 1 the run must be linearizable: an update answers
// 200 only once a replica holds it, and a list shows only a state that a
// replica holds, so the promoted replica (Sentinel picks the one furthest
// in the replication stream) takes back nothing a client saw. With
// -replica-acks 0 (the negative control) the check must fail, naming a
// write that was lost or taken back: without acknowledgements a failover
// loses what the master had not yet sent. A forced failover
// (redis-failover: SENTINEL FAILOVER) is held only with acknowledgements
// of every replica (-replica-acks 2): with 1 it is a second negative
// control, as CONTRACT says. No failover answers a 500: a write whose
// master was demoted under it has an unknown outcome, a 503.
func TestConsistencyRedisSentinelFailover(t *testing.T) {
	proctest.Long(t)
	// The set has two replicas. A crash (kill -9) is held by one
	// replica's acknowledgement: Sentinel promotes the replica that has
	// the most. A forced failover (SENTINEL FAILOVER) is held only by
	// every replica's: the old master takes writes until the sentinels
	// reconfigure it, and the replica not promoted acknowledges them
	// meanwhile, then drops them when it follows the new master. The
	// suite must see that loss: acks=1 graceful is a negative control.
	for _, tc := range []struct {
		acks     int
		graceful bool
		pass     bool
	}{{1, false, true}, {0, false, false}, {2, true, true}, {1, true, false}} {
		t.Run(fmt.Sprintf("acks=%d graceful=%v", tc.acks, tc.graceful), func(t *testing.T) {
			outcome, lin, res := sentinelFailoverRun(t, tc.acks, tc.graceful)
			// A negative control: a write the failover loses shows only
			// when a list reads its pet before the pet's next write, which
			// the clients race for once the new master answers; a run
			// whose clients overwrote every lost write passes. It gets
			// three runs to be caught.
			for try := 2; !tc.pass && outcome == "PASS" && try <= 3; try++ {
				t.Logf("negative control: run %d passed (every lost write overwritten before a list read it); run %d", try-1, try)
				outcome, lin, res = sentinelFailoverRun(t, tc.acks, tc.graceful)
			}
			var faults []conformancetest.FaultResult // none when the report was not JSON
			if lin.Consistency != nil {
				faults = lin.Consistency.Faults
			}
			if len(faults) != 1 || faults[0].Window <= 0 {
				t.Errorf("the report has no fault with its window:\n%s", res.stdout)
			}
			if len(faults) == 1 && faults[0].Answers["500"] > 0 {
				t.Errorf("an answer of the failover was a 500; a write whose outcome is unknown answers 503: %s", faults[0].Line())
			}
			if tc.pass {
				if outcome == "PASS" && res.code == 0 {
					return
				}
				t.Fatalf("with -replica-acks %d the run must be linearizable through the failover; exit %d:\n%s%s", tc.acks, res.code, res.stdout, res.stderr)
			}
			if outcome != "FAIL" || res.code != 1 {
				t.Fatalf("negative control: with -replica-acks %d and %v of lag the failover must lose a write the check sees (exit %d, %s):\n%s%s", tc.acks, failoverLag, res.code, outcome, res.stdout, res.stderr)
			}
			if kinds := kindsOf(lin); len(kinds) == 0 || !slices.Contains(lostWrite, kinds[0]) {
				t.Fatalf("negative control: the check failed, of kinds %q, but not first of one of %q (no lost or taken-back write):\n%s", kinds, lostWrite, res.stdout)
			}
			fault := "6s exec kill -9 "
			if tc.graceful {
				fault = "6s redis-failover"
			}
			if f := lin.Failures[0]; !strings.HasPrefix(f.AfterFault, fault) {
				t.Errorf("negative control: the failure does not say which fault it followed: %q, %s", f.AfterFault, f.Problem)
			}
		})
	}
}

// sentinelFailoverRun is one run of TestConsistencyRedisSentinelFailover:
// the fault is the suite's, on the run's clock. It prints one summary
// line.
func sentinelFailoverRun(t *testing.T, acks int, graceful bool) (outcome string, lin conformancetest.Result, res cmdResult) {
	const run = 16 * time.Second
	set := redistest.StartSentinel(t, redistest.SentinelOptions{ReplicaLag: failoverLag})
	url := set.URL()
	rs := startReplicas(t, url, "e2e-consistency-sentinel", threeFrameworks,
		"-replica-acks", strconv.Itoa(acks), "-replica-ack-timeout", "2s", "-store-timeout", "4s")
	old := set.Master()
	if err := set.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	delay, err := set.ReplicationDelay()
	if err != nil {
		t.Fatal(err)
	}
	var fault []string
	if graceful {
		fault = []string{"-consistency-redis", url, "-consistency-fault", "6s redis-failover"}
	} else {
		pid, err := old.Info("server", "process_id")
		if err != nil {
			t.Fatal(err)
		}
		fault = []string{"-consistency-fault", "6s exec kill -9 " + pid}
		defer severOnDeath(set, old)()
	}
	res = runCmd(t, commandBinary(t), consistencyArgs(run, bases(rs), fault...)...)
	promoted := set.WaitFailover(old, redistest.SentinelPromotedWithin)
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
	window := "none"
	if faults := faultsOf(t, lin); len(faults) == 1 {
		window = faults[0].Window.Round(time.Millisecond).String()
	}
	how := "master killed (exec kill -9)"
	if graceful {
		how = "graceful failover (redis-failover)"
	}
	proctest.Summary(t, "FAILOVER_SUMMARY", "consistency sentinel lag=%v (a write reached the replicas in %v) acks=%d: %s (exit %d); %s 6s into the %v run, %s promoted; window without a successful update %s%s",
		failoverLag, delay.Round(time.Millisecond), acks, outcome, res.code, how, run, promoted.Name, window, updateFigures(lin))
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

// TestConsistencyRedisClusterGracefulFailover: with -replica-acks 1, a
// Cluster whose replicas lag 50 ms stays linearizable through the
// suite's "4s redis-failover": CLUSTER FAILOVER sent to the replica of
// the master that owns the store's slot, found from the key prefix.
func TestConsistencyRedisClusterGracefulFailover(t *testing.T) {
	proctest.Long(t)
	const prefix = "e2e-consistency-cluster-graceful"
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{ReplicaLag: failoverLag})
	slot := c.KeySlot("{" + prefix + "}:items")
	master := c.MasterOf(slot)
	others, _ := c.Others(slot)
	url := redistest.ClusterURL(append([]*redistest.Node{master}, others...)...)
	rs := startReplicas(t, url, prefix, threeFrameworks, "-replica-acks", "1", "-replica-ack-timeout", "500ms")
	if err := c.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	res := runCmd(t, commandBinary(t), consistencyArgs(12*time.Second, bases(rs),
		"-consistency-redis", url, "-consistency-redis-prefix", prefix, "-consistency-fault", "4s redis-failover")...)
	outcome, lin := linearizable(t, res.stdout)
	faults := faultsOf(t, lin)
	promoted := c.WaitPromoted(slot, master, 30*time.Second)
	line := "no fault in the report"
	if len(faults) == 1 {
		line = faults[0].Line()
	}
	proctest.Summary(t, "FAILOVER_SUMMARY", "consistency cluster lag=%v acks=1, graceful failover (redis-failover) 4s into a 12s run: %s (exit %d), %s promoted; %s",
		failoverLag, outcome, res.code, promoted.Name, line)
	if len(faults) != 1 || faults[0].Note != "master "+master.Addr()+" replaced by "+promoted.Addr() {
		t.Errorf("the fault does not name the failover from %s to %s:\n%s", master.Addr(), promoted.Addr(), res.stdout)
	}
	if outcome != "PASS" || res.code != 0 {
		t.Fatalf("with -replica-acks 1 the run must be linearizable through the failover; exit %d, %s:\n%s%s", res.code, lin.Detail, res.stdout, res.stderr)
	}
}

// TestConsistencyFaultRedisRefused: a fault Redis that refuses the
// password stops the run before it starts, with exit status 2 and the
// fault named, the password nowhere in the output.
func TestConsistencyFaultRedisRefused(t *testing.T) {
	proctest.Long(t)
	const password = "faults-password-right"
	node := redisFor(t)
	// The least rule the redis-pause and redis-kill-clients faults need
	// on one node.
	if err := redistest.SetUser([]*redistest.Node{node}, "faults", "on", ">"+password, "-@all", "+ping", "+client|pause", "+client|kill"); err != nil {
		t.Fatal(err)
	}
	rs := startReplicas(t, "redis://"+node.Addr()+"/0", "e2e-consistency-refused", []string{"gin"})
	const wrong = "faults-password-wrong"
	res := runCmd(t, commandBinary(t), consistencyArgs(3*time.Second, bases(rs),
		"-consistency-redis", "redis://faults:"+wrong+"@"+node.Addr()+"/0", "-consistency-fault", "1s redis-pause 500ms")...)
	out := res.stdout + res.stderr
	if res.code != 2 || !strings.Contains(res.stderr, `fault "1s redis-pause 500ms"`) || !strings.Contains(res.stderr, "refused") {
		t.Errorf("exit %d; want 2 and the fault named with why:\n%s", res.code, out)
	}
	if strings.Contains(out, wrong) || strings.Contains(out, password) {
		t.Errorf("the output shows the password:\n%s", out)
	}
	// With the right password and the least rule, both faults apply.
	res = runCmd(t, commandBinary(t), consistencyArgs(3*time.Second, bases(rs),
		"-consistency-redis", "redis://faults:"+password+"@"+node.Addr()+"/0",
		"-consistency-fault", "1s redis-pause 500ms", "-consistency-fault", "2s redis-kill-clients")...)
	if outcome, lin := linearizable(t, res.stdout); res.code != 0 || outcome != "PASS" || len(faultsOf(t, lin)) != 2 {
		t.Errorf("with the least rule: exit %d, %s:\n%s%s", res.code, outcome, res.stdout, res.stderr)
	}
	if strings.Contains(res.stdout+res.stderr, password) {
		t.Errorf("the output shows the password:\n%s%s", res.stdout, res.stderr)
	}
}

// TestConsistencyRedisClusterFailover runs the consistency check with
// -replica-acks 1 through three processes (Gin, Fiber, Gin) on a 6-node
// Cluster (one replica per master) whose replicas lag 50 ms, and the
// suite's schedule kills the master that owns the store 6 s into a 20 s
// run ("6s exec kill -9 PID"), the stream in flight to its replica lost.
// The run must be linearizable.
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
	url := redistest.ClusterURL(append([]*redistest.Node{master}, others...)...)
	rs := startReplicas(t, url, "e2e-consistency-cluster", threeFrameworks,
		"-replica-acks", "1", "-replica-ack-timeout", "500ms")
	if err := c.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	all := bases(rs)
	pid, err := master.Info("server", "process_id")
	if err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := start(t, commandBinary(t), consistencyArgs(run, all, "-consistency-fault", killAt.String()+" exec kill -9 "+pid)...)
	// The suite kills the master on its schedule; its host goes down
	// with it, the stream in flight to its replica lost.
	if err := redistest.Poll(run, func() error {
		if master.Alive() {
			return errors.New("the master is alive")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.Sever(master)
	runAt := time.Now().Add(-killAt) // the run's clock, near enough for the summary
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
	err = redistest.Poll(run, func() error {
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
