package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// Lists through a store outage, end to end: examples/redis processes with
// -stale-if-error 30s keep answering the lists of other clients 200
// through a master killed, a pause longer than the store's time-out and a
// Cluster failover, while updates answer 503 as without it; the suite,
// given the bound, judges the lists marked stale against it and passes,
// and without it fails naming the unexpected stale lists; a store wiped
// under the servers is never answered from the state held before.

// staleIfError is the servers' -stale-if-error and the suite's
// -consistency-stale-if-error.
const staleIfError = 30 * time.Second

// staleArgs are the arguments of the runs judged against the bound.
var staleArgs = []string{"-consistency-stale-if-error", staleIfError.String()}

// checkStaleRun holds what every outage run with the bound must show: a
// pass; no outside list answered other than 200, some of them stale (the
// outage met them: else the run proves nothing); no answer 500 to anyone;
// and one fault whose line gives the lists' availability in its window,
// their oldest Age within the bound. suiteStale: some of the suite's own
// lists in the window must be stale too (an outage of seconds, which
// every client of the suite meets with lists).
func checkStaleRun(t *testing.T, res cmdResult, outcome string, lin conformancetest.Result, load *outsideLoad, suiteStale bool) {
	t.Helper()
	if outcome != "PASS" || res.code != 0 {
		t.Errorf("exit %d, %s; want 0, PASS:\n%s%s", res.code, outcome, res.stdout, res.stderr)
	}
	lists, updates := load.tally(false), load.tally(true)
	if n := notOK(lists); n > 0 {
		t.Errorf("%d outside lists answered other than 200: %s", n, load)
	}
	if load.staleLists() == 0 {
		t.Errorf("no outside list was answered stale: the outage never met them, and the run proves nothing: %s", load)
	}
	if updates["500"] > 0 {
		t.Errorf("outside updates answered 500: %s", load)
	}
	faults := faultsOf(t, lin)
	if len(faults) != 1 {
		t.Fatalf("%d faults in the report, want 1:\n%s", len(faults), res.stdout)
	}
	f := faults[0]
	if f.Answers["500"] > 0 {
		t.Errorf("the suite got %d answers 500 after the fault", f.Answers["500"])
	}
	// The barriers are strict lists: they answer 503 in the outage, and
	// the other lists of the window 200, the stale ones with their oldest
	// Age.
	switch {
	case f.Sent == 0 || suiteStale && f.Stale == 0:
		t.Errorf("the fault's window: %d of %d of the suite's lists answered 200, %d stale; want some stale", f.Answered, f.Sent, f.Stale)
	case f.Stale > 0 && (f.OldestAge == nil || *f.OldestAge > int64(staleIfError/time.Second)):
		t.Errorf("the fault's window: %d stale lists, the oldest Age %v; want one, within %v", f.Stale, f.OldestAge, staleIfError)
	}
}

// TestStaleIfErrorMasterKilled: three processes -replica-acks 1
// -stale-if-error 30s on a Sentinel set whose replicas lag 50 ms; the
// suite kills the master 6 s into a 20 s run ("6s exec kill -9 PID"),
// judged with -consistency-stale-if-error 30s, while six other clients
// list and update other pets. The run passes; not one outside list
// answers other than 200; updates in the outage answer 503 as before.
func TestStaleIfErrorMasterKilled(t *testing.T) {
	proctest.Long(t)
	const run = 20 * time.Second
	d := startSentinelDeployment(t)
	all := d.servers(t, "e2e-stale-sentinel", "-replica-acks", "1", "-replica-ack-timeout", "2s", "-store-timeout", "4s",
		"-stale-if-error", staleIfError.String())
	old := d.set.Master()
	pid, err := old.Info("server", "process_id")
	if err != nil {
		t.Fatal(err)
	}
	defer severOnDeath(d.set, old)()
	before := strictQuantities(t, all[0])
	began := time.Now()
	load := startOutside(t, all, outsideClients)
	res := runCmd(t, commandBinary(t), consistencyArgs(run, all, append(staleArgs, "-consistency-fault", "6s exec kill -9 "+pid)...)...)
	load.restore(t)
	promoted := d.set.WaitFailover(old, redistest.SentinelPromotedWithin)
	outcome, lin := linearizable(t, res.stdout)
	proctest.Summary(t, summaryEnv, "stale-if-error %v, sentinel lag=%v acks=1, master killed (exec kill -9) 6s into a %v run, %s promoted, %d outside clients: %s (exit %d); %s; %s; %s; in %.1fs",
		staleIfError, failoverLag, run, promoted.Name, outsideClients, outcome, res.code, density(lin), faultFigures(lin), load, time.Since(began).Seconds())
	checkStaleRun(t, res, outcome, lin, load, true)
	if updates := load.tally(true); updates["503"] == 0 {
		t.Errorf("no outside update answered 503 through the outage: %s", load)
	}
	if after := strictQuantities(t, all[0]); !maps.Equal(before, after) {
		t.Errorf("the quantities were not restored: before %v, after %v", before, after)
	}
}

// TestStaleIfErrorOneRedis: three processes -stale-if-error 30s on one
// Redis (the store's time-out the default 2 s).
//   - Paused for 4 s by the suite ("4s redis-pause 4s", longer than the
//     time-out), judged with the bound: the run passes and not one
//     outside list answers other than 200.
//   - The same judged without the bound: the run fails, kind
//     unexpected-stale.
//   - The same behind proxies that answer each stale list with the
//     state of the run's start, under the process's Age of a second or
//     two (a stale list older than it declares): the run fails, kind
//     stale-beyond-bound.
//   - The store wiped under the servers (FLUSHALL), then out of reach
//     (its process stopped): lists answer 503 within seconds through
//     every process, and not one list sent after a 503 showed the wipe
//     answers 200: the state held from before the wipe is never served.
func TestStaleIfErrorOneRedis(t *testing.T) {
	proctest.Long(t)
	const run = 12 * time.Second
	node := redisFor(t)
	redisURL := "redis://" + node.Addr() + "/0"
	all := bases(startReplicas(t, redisURL, "e2e-stale-one", threeFrameworks, "-stale-if-error", staleIfError.String()))
	pause := []string{"-consistency-redis", redisURL, "-consistency-fault", "4s redis-pause 4s"}
	// The runs that fail on the suite's own stale lists need some. Each
	// of the suite's eight clients sends a list or an update at even
	// odds, and each request in the pause waits out the store's 2 s time
	// -out, as the strict barrier after them does: a pause of 7 s holds
	// two requests of every client, whatever the phase of the rounds it
	// begins in (all sixteen updates: odds of 1 in 65 536).
	judged := []string{"-consistency-redis", redisURL, "-consistency-fault", "4s redis-pause 7s"}

	t.Run("a pause longer than the store's time-out", func(t *testing.T) {
		began := time.Now()
		load := startOutside(t, all, outsideClients)
		res := runCmd(t, commandBinary(t), consistencyArgs(run, all, append(slices.Clone(staleArgs), pause...)...)...)
		load.restore(t)
		outcome, lin := linearizable(t, res.stdout)
		proctest.Summary(t, summaryEnv, "stale-if-error %v, one Redis paused 4s (store time-out 2s) 4s into a %v run, %d outside clients: %s (exit %d); %s; %s; %s; in %.1fs",
			staleIfError, run, outsideClients, outcome, res.code, density(lin), faultFigures(lin), load, time.Since(began).Seconds())
		checkStaleRun(t, res, outcome, lin, load, false)
	})

	t.Run("judged without the bound", func(t *testing.T) {
		began := time.Now()
		res := runCmd(t, commandBinary(t), consistencyArgs(run, all, judged...)...)
		outcome, lin := linearizable(t, res.stdout)
		proctest.Summary(t, summaryEnv, "stale-if-error %v, one Redis paused 7s, judged without -consistency-stale-if-error: %s (exit %d), kinds %q; %s; in %.1fs",
			staleIfError, outcome, res.code, kindsOf(lin), density(lin), time.Since(began).Seconds())
		if outcome != "FAIL" || res.code != 1 || !slices.Contains(kindsOf(lin), conformancetest.KindUnexpectedStale) {
			t.Errorf("exit %d, %s, kinds %q; want 1, FAIL, %q:\n%s%s", res.code, outcome, kindsOf(lin), conformancetest.KindUnexpectedStale, res.stdout, res.stderr)
		}
	})

	t.Run("a stale list older than its Age", func(t *testing.T) {
		var lying []string
		var proxies []*olderThanDeclared
		for _, b := range all {
			p := newOlderThanDeclared(t, b)
			lying, proxies = append(lying, p.base), append(proxies, p)
		}
		lied := func() (n int64) {
			for _, p := range proxies {
				n += p.lied.Load()
			}
			return n
		}
		began := time.Now()
		res := runCmd(t, commandBinary(t), consistencyArgs(run, lying, append(slices.Clone(staleArgs), judged...)...)...)
		outcome, lin := linearizable(t, res.stdout)
		proctest.Summary(t, summaryEnv, "stale-if-error %v, one Redis paused 7s, proxies answering stale lists with the run's first state under the process's Age: %s (exit %d), kinds %q, %d lists rewritten; %s; in %.1fs",
			staleIfError, outcome, res.code, kindsOf(lin), lied(), density(lin), time.Since(began).Seconds())
		if lied() == 0 {
			t.Fatalf("the proxy rewrote no stale list: the run proves nothing:\n%s", res.stdout)
		}
		if outcome != "FAIL" || res.code != 1 || !slices.Contains(kindsOf(lin), conformancetest.KindStaleBeyondBound) {
			t.Errorf("exit %d, %s, kinds %q; want 1, FAIL, %q:\n%s%s", res.code, outcome, kindsOf(lin), conformancetest.KindStaleBeyondBound, res.stdout, res.stderr)
		}
	})

	t.Run("a wiped store is never answered from the state held before", func(t *testing.T) {
		wipedStore(t, node, all)
	})
}

// olderThanDeclared is a deployment broken on purpose: in front of a
// process with -stale-if-error, it forwards every request and keeps the
// first list answered fresh; a list the process answers stale, it
// answers with that first state instead, under the process's headers (its
// Age of a second or two): a stale list older than it declares. lied
// counts them.
type olderThanDeclared struct {
	base  string // the proxy's base URL
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	first *recorded
	lied  atomic.Int64
}

// newOlderThanDeclared serves an olderThanDeclared in front of base until
// the test ends.
func newOlderThanDeclared(t *testing.T, base string) *olderThanDeclared {
	t.Helper()
	origin, err := url.Parse(strings.TrimSuffix(base, "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	p := &olderThanDeclared{proxy: httputil.NewSingleHostReverseProxy(origin)}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.base = srv.URL + "/v1"
	return p
}

func (p *olderThanDeclared) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/inventory") {
		p.proxy.ServeHTTP(w, r)
		return
	}
	rec := serveRecorded(p.proxy, r)
	p.mu.Lock()
	switch {
	case rec.status == http.StatusOK && !staleMarked(rec.header) && p.first == nil:
		p.first = rec
	case rec.status == http.StatusOK && staleMarked(rec.header) && p.first != nil:
		rec.body = p.first.body
		for _, h := range []string{"ETag", "Content-Encoding", "Content-Type"} {
			rec.header[h] = p.first.header[h]
		}
		p.lied.Add(1)
	}
	p.mu.Unlock()
	writeRecorded(w, rec)
}

// wipedStore wipes the store under the processes of bases while outside
// clients list through them, waits until every process has answered a
// list 503, then stops Redis's process (SIGSTOP) until every process has
// answered a list sent after that, and checks that no list sent after
// the first 503 answered 200.
func wipedStore(t *testing.T, node *redistest.Node, bases []string) {
	began := time.Now()
	load := startOutside(t, bases, outsideClients)
	defer load.stop()
	if err := redistest.Poll(10*time.Second, func() error { return listsSince(load, began, http.StatusOK, len(bases)) }); err != nil {
		t.Fatalf("before the wipe: %v", err)
	}
	wiped := time.Now()
	if _, err := node.Do("FLUSHALL"); err != nil {
		t.Fatal(err)
	}
	if err := redistest.Poll(10*time.Second, func() error { return listsSince(load, wiped, http.StatusServiceUnavailable, len(bases)) }); err != nil {
		t.Fatalf("after the wipe: %v", err)
	}
	first := firstAnswered(load, wiped, http.StatusServiceUnavailable)
	node.Stop()
	stopped := time.Now()
	err := redistest.Poll(20*time.Second, func() error { return listsAnsweredSince(load, stopped, len(bases)) })
	node.Continue()
	if err != nil {
		t.Fatalf("with Redis stopped: %v", err)
	}
	load.stop()
	var after, stale, outOfReach int
	var shown []string
	for _, a := range load.lists() {
		if a.sent.Before(first) {
			continue
		}
		after++
		if !a.sent.Before(stopped) {
			outOfReach++
		}
		if a.status == http.StatusOK {
			shown = append(shown, fmt.Sprintf("sent %.3fs after the wipe through %s", a.sent.Sub(wiped).Seconds(), bases[a.base]))
			if a.stale {
				stale++
			}
		}
	}
	proctest.Summary(t, summaryEnv, "stale-if-error %v, the store wiped (FLUSHALL) under three processes, then stopped: lists 503 through every process %.3fs after the wipe; %d lists sent after the first 503 (%d with Redis stopped), %d answered 200 (%d marked stale); in %.1fs",
		staleIfError, lastFirst(load, wiped, len(bases)).Sub(wiped).Seconds(), after, outOfReach, len(shown), stale, time.Since(began).Seconds())
	if outOfReach == 0 {
		t.Errorf("no list was sent with Redis stopped: the test proves nothing")
	}
	if len(shown) > 0 {
		t.Errorf("%d lists sent after the wipe was seen answered 200 (%d marked stale), the state from before the wipe:\n%s", len(shown), stale, strings.Join(shown, "\n"))
	}
}

// listsSince reports an error until, through each of the n base URLs, a
// list sent at or after since was answered status.
func listsSince(load *outsideLoad, since time.Time, status, n int) error {
	seen := map[int]bool{}
	for _, a := range load.lists() {
		if !a.sent.Before(since) && a.status == status {
			seen[a.base] = true
		}
	}
	if len(seen) < n {
		return fmt.Errorf("lists answered %d through %d of %d base URLs", status, len(seen), n)
	}
	return nil
}

// listsAnsweredSince reports an error until, through each of the n base
// URLs, a list sent at or after since was answered (whatever its status).
func listsAnsweredSince(load *outsideLoad, since time.Time, n int) error {
	seen := map[int]bool{}
	for _, a := range load.lists() {
		if !a.sent.Before(since) {
			seen[a.base] = true
		}
	}
	if len(seen) < n {
		return fmt.Errorf("lists answered through %d of %d base URLs", len(seen), n)
	}
	return nil
}

// firstAnswered is when the first list sent at or after since was
// answered status.
func firstAnswered(load *outsideLoad, since time.Time, status int) time.Time {
	var first time.Time
	for _, a := range load.lists() {
		if !a.sent.Before(since) && a.status == status && (first.IsZero() || a.at.Before(first)) {
			first = a.at
		}
	}
	return first
}

// lastFirst is when the last of the n base URLs answered its first 503
// to a list sent at or after since: when lists answered 503 through every
// process.
func lastFirst(load *outsideLoad, since time.Time, n int) time.Time {
	firsts := map[int]time.Time{}
	for _, a := range load.lists() {
		if a.sent.Before(since) || a.status != http.StatusServiceUnavailable {
			continue
		}
		if f, ok := firsts[a.base]; !ok || a.at.Before(f) {
			firsts[a.base] = a.at
		}
	}
	var last time.Time
	for _, f := range firsts {
		if f.After(last) {
			last = f
		}
	}
	return last
}

// TestStaleIfErrorClusterFailover: three processes -replica-acks 1
// -stale-if-error 30s on a Cluster whose replicas lag 50 ms; the suite
// fails the store's master over ("4s redis-failover") in a 12 s run
// judged with the bound, while six other clients list and update other
// pets: the run passes and not one outside list answers other than 200.
func TestStaleIfErrorClusterFailover(t *testing.T) {
	proctest.Long(t)
	const run, prefix = 12 * time.Second, "e2e-stale-cluster"
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{ReplicaLag: failoverLag})
	slot := c.KeySlot("{" + prefix + "}:items")
	master := c.MasterOf(slot)
	others, _ := c.Others(slot)
	url := redistest.ClusterURL(append([]*redistest.Node{master}, others...)...)
	all := bases(startReplicas(t, url, prefix, threeFrameworks, "-replica-acks", "1", "-replica-ack-timeout", "500ms",
		"-stale-if-error", staleIfError.String()))
	if err := c.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	load := startOutside(t, all, outsideClients)
	res := runCmd(t, commandBinary(t), consistencyArgs(run, all, append(slices.Clone(staleArgs),
		"-consistency-redis", url, "-consistency-redis-prefix", prefix, "-consistency-fault", "4s redis-failover")...)...)
	load.restore(t)
	promoted := c.WaitPromoted(slot, master, 30*time.Second)
	outcome, lin := linearizable(t, res.stdout)
	faults := faultsOf(t, lin)
	proctest.Summary(t, summaryEnv, "stale-if-error %v, cluster lag=%v acks=1, failover (redis-failover) 4s into a %v run, %s promoted, %d outside clients: %s (exit %d); %s; %s; %s; in %.1fs",
		staleIfError, failoverLag, run, promoted.Name, outsideClients, outcome, res.code, density(lin), faultFigures(lin), load, time.Since(began).Seconds())
	if outcome != "PASS" || res.code != 0 {
		t.Errorf("exit %d, %s; want 0, PASS:\n%s%s", res.code, outcome, res.stdout, res.stderr)
	}
	if len(faults) != 1 {
		t.Errorf("%d faults in the report, want 1:\n%s", len(faults), res.stdout)
	}
	if n := notOK(load.tally(false)); n > 0 {
		t.Errorf("%d outside lists answered other than 200: %s", n, load)
	}
	if load.tally(true)["500"] > 0 {
		t.Errorf("outside updates answered 500: %s", load)
	}
}
