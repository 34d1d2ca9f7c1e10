package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// The staleness bound end to end: examples/redis processes (Gin, Fiber,
// Gin) with -max-staleness 50ms on one real Redis, judged by
// inventory-conformance -consistency-staleness 50ms under a load of
// lists, with Redis healthy and paused for 2 s mid-run; strict processes
// observed at 0; and a deployment that keeps serving its held list
// through the pause caught. (A replica behind a cache 300 ms stale,
// caught at 50 ms, is TestConsistencyCommand's.)

// staleBound is the bound of the processes and of the judge.
const staleBound = 50 * time.Millisecond

// stalenessRun is how long each consistency run of these tests lasts.
const stalenessRun = 10 * time.Second

// staleResult is what a run of inventory-conformance said.
type staleResult struct {
	cmdResult
	outcome  string                 // PASS, FAIL or SKIP of consistency/linearizable
	lin      conformancetest.Result // the result, from the JSON report
	observed *time.Duration         // the observed staleness, nil when the report gives no figure
	words    string                 // the observed staleness in the report's words, for the logs
	ops      string                 // the result's detail line (what was judged), for the logs
}

// startStalenessCmd starts inventory-conformance for a run of
// stalenessRun against bases, judged against bound, with extra
// arguments (a fault schedule).
func startStalenessCmd(t *testing.T, bases []string, bound time.Duration, extra ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return start(t, commandBinary(t), consistencyArgs(stalenessRun, bases, append([]string{"-consistency-staleness", bound.String()}, extra...)...)...)
}

// readStaleness reads a finished run's JSON report. The observed
// staleness has a figure when the history passes with some bound: 0, the
// smallest bound to the millisecond with which it passes, or (when the
// checker ran out of time) a bound it passes with above one it fails
// with, judged by that upper end.
func readStaleness(t *testing.T, res cmdResult) staleResult {
	t.Helper()
	r := staleResult{cmdResult: res}
	r.outcome, r.lin = linearizable(t, res.stdout)
	r.ops = r.lin.Detail
	if c := r.lin.Consistency; c != nil {
		r.observed, r.words = c.ObservedStaleness, c.Observed
	}
	return r
}

// summary is the one line each test logs: its figures.
func (r staleResult) summary(t *testing.T, what string) {
	t.Helper()
	t.Logf("%s: exit %d, %s, observed staleness %s; %s", what, r.code, r.outcome, r.words, r.ops)
}

// listLoad is a load of lists beside a run: a few goroutines listing
// through bases in turn, on loopback, for as long as the run sends
// requests (not while its checker judges), at most loadMost lists. It
// counts its lists, those not 200, and the longest answer.
type listLoad struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	lists   atomic.Int64
	not200  atomic.Int64
	longest atomic.Int64 // ns
}

// loadWorkers and loadMost bound the load: it must not starve the run
// of the machine's cores, only keep lists coming.
const (
	loadWorkers = 4
	loadMost    = 200_000
)

func startListLoad(t *testing.T, bases []string) *listLoad {
	ctx, cancel := context.WithTimeout(t.Context(), stalenessRun)
	l := &listLoad{cancel: cancel}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadWorkers}}
	for w := range loadWorkers {
		l.wg.Go(func() {
			for i := w; ctx.Err() == nil && l.lists.Load() < loadMost; i++ {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, bases[i%len(bases)]+"/inventory", nil)
				if err != nil {
					return
				}
				req.Header.Set("Authorization", "Bearer "+testKey)
				began := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					continue // the load stops, or a process is gone: the run says which
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took := int64(time.Since(began))
				for old := l.longest.Load(); took > old && !l.longest.CompareAndSwap(old, took); old = l.longest.Load() {
				}
				l.lists.Add(1)
				if resp.StatusCode != http.StatusOK {
					l.not200.Add(1)
				}
			}
		})
	}
	t.Cleanup(l.stop)
	return l
}

func (l *listLoad) stop() { l.cancel(); l.wg.Wait() }

func (l *listLoad) String() string {
	return strconv.FormatInt(l.lists.Load(), 10) + " load lists (" + strconv.FormatInt(l.not200.Load(), 10) +
		" not 200, the longest " + time.Duration(l.longest.Load()).Round(time.Millisecond).String() + ")"
}

// runUnderLoad runs inventory-conformance against bases, judged against
// bound, with a load of lists through them.
func runUnderLoad(t *testing.T, bases []string, bound time.Duration) (staleResult, *listLoad) {
	t.Helper()
	load := startListLoad(t, bases)
	cmd, stdout, stderr := startStalenessCmd(t, bases, bound)
	res := readStaleness(t, wait(t, cmd, stdout, stderr))
	load.stop()
	return res, load
}

// TestStalenessRedisReplicas: three bounded processes under load pass at
// 50 ms with an observed staleness above 0 and at most 50 ms; three
// strict processes under the same load are observed at 0. (A replica
// behind a cache that answers lists up to 300 ms old failing at 50 ms is
// TestConsistencyCommand's, and TestConsistencyStalenessCatchesStaleCache's
// through the library.)
func TestStalenessRedisReplicas(t *testing.T) {
	proctest.Long(t)
	t.Parallel()
	node := redisFor(t)
	redisURL := "redis://" + node.Addr() + "/0"

	t.Run("bounded processes pass at 50ms", func(t *testing.T) {
		rs := startReplicas(t, redisURL, "e2e-staleness-bounded", threeFrameworks, "-max-staleness", staleBound.String())
		res, load := runUnderLoad(t, bases(rs), staleBound)
		res.summary(t, "bounded, "+load.String())
		if res.code != 0 || res.outcome != "PASS" {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, res.outcome, res.stdout, res.stderr)
		}
		if res.observed == nil || *res.observed <= 0 || *res.observed > staleBound {
			t.Fatalf("observed staleness %q: want above 0 and at most %v:\n%s", res.words, staleBound, res.stdout)
		}
	})

	t.Run("strict processes are observed at 0", func(t *testing.T) {
		rs := startReplicas(t, redisURL, "e2e-staleness-strict", threeFrameworks)
		res, load := runUnderLoad(t, bases(rs), staleBound)
		res.summary(t, "strict, "+load.String())
		if res.code != 0 || res.outcome != "PASS" {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, res.outcome, res.stdout, res.stderr)
		}
		if res.observed == nil || *res.observed != 0 {
			t.Fatalf("observed staleness %q: want 0:\n%s", res.words, res.stdout)
		}
	})
}

// holdingProxy is a deployment broken on purpose: in front of a bounded
// replica, it forwards every request and keeps a copy of the list,
// refreshed from a 200 answer at most every holdEvery; when its store
// fails (the list answers 503: Redis paused), it answers the list with
// that copy, as a build that "stays up when the store is down" would,
// instead of the 503 of the strict path. held counts the lists it
// answered so.
type holdingProxy struct {
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	last  *recorded
	at    time.Time
	held  atomic.Int64
}

// holdEvery is how often the holding proxy refreshes its copy: older
// than the bound, so that a copy served in the pause misses updates
// answered more than the bound before.
const holdEvery = 500 * time.Millisecond

func newHoldingProxy(origin *url.URL) *holdingProxy {
	return &holdingProxy{proxy: httputil.NewSingleHostReverseProxy(origin)}
}

func (p *holdingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/inventory") {
		p.proxy.ServeHTTP(w, r)
		return
	}
	rec := serveRecorded(p.proxy, r)
	p.mu.Lock()
	switch {
	case rec.status == http.StatusOK && time.Since(p.at) >= holdEvery:
		p.last, p.at = rec, time.Now()
	case rec.status == http.StatusServiceUnavailable && p.last != nil:
		rec = p.last
		p.held.Add(1)
	}
	p.mu.Unlock()
	writeRecorded(w, rec)
}

// pauseFault is the fault schedule of the pause runs: every client of
// Redis paused for 2 s, 4 s into the run, by the suite itself.
func pauseFault(node *redistest.Node) []string {
	return []string{"-consistency-redis", "redis://" + node.Addr() + "/0", "-consistency-fault", "4s redis-pause 2s"}
}

// pausedArgs are the settings of the processes Redis is paused under: a
// bound of 50 ms, and a store timeout of 200 ms, so that a list or update
// the pause holds answers 503 within it and the run's clients keep
// sending through the pause (with the default 2 s, each would wait the
// pause out on its first request and no list would be sent in it).
var pausedArgs = []string{"-max-staleness", staleBound.String(), "-store-timeout", "200ms"}

// TestStalenessRedisPause: the three bounded processes still pass at
// 50 ms with Redis paused for 2 s mid-run by the suite's own schedule
// ("4s redis-pause 2s": the lists the pause holds answer 503, never an
// older state), and a proxy that serves a held copy of the list while its
// store fails is caught, named with the update it missed.
func TestStalenessRedisPause(t *testing.T) {
	proctest.Long(t)
	t.Parallel()
	node := redisFor(t)
	redisURL := "redis://" + node.Addr() + "/0"

	t.Run("bounded processes pass through a 2s pause", func(t *testing.T) {
		rs := startReplicas(t, redisURL, "e2e-staleness-pause", threeFrameworks, pausedArgs...)
		load := startListLoad(t, bases(rs))
		cmd, stdout, stderr := startStalenessCmd(t, bases(rs), staleBound, pauseFault(node)...)
		res := readStaleness(t, wait(t, cmd, stdout, stderr))
		load.stop()
		res.summary(t, "paused 2s, "+load.String())
		if faults := faultsOf(t, res.lin); len(faults) != 1 || faults[0].Note != "paused "+node.Addr()+" for 2s" {
			t.Errorf("the report has no fault for the pause:\n%s", res.stdout)
		}
		if res.code != 0 || res.outcome != "PASS" {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, res.outcome, res.stdout, res.stderr)
		}
		if res.observed == nil || *res.observed > staleBound {
			t.Fatalf("observed staleness %q: want at most %v:\n%s", res.words, staleBound, res.stdout)
		}
		// The pause met the run's lists: else the run proved nothing of
		// it.
		if c := res.lin.Consistency; c == nil || c.FailedLists == 0 {
			t.Fatalf("no list of the run failed in the pause: the run proves nothing of it:\n%s", res.stdout)
		}
	})

	t.Run("a proxy serving its held list through the pause fails", func(t *testing.T) {
		rs := startReplicas(t, redisURL, "e2e-staleness-pause-proxy", threeFrameworks, pausedArgs...)
		origin, err := url.Parse(strings.TrimSuffix(rs[1].base, "/v1"))
		if err != nil {
			t.Fatal(err)
		}
		p := newHoldingProxy(origin)
		proxy := httptest.NewServer(p)
		t.Cleanup(proxy.Close)
		all := []string{rs[0].base, proxy.URL + "/v1", rs[2].base}
		load := startListLoad(t, all)
		cmd, stdout, stderr := startStalenessCmd(t, all, staleBound, pauseFault(node)...)
		res := readStaleness(t, wait(t, cmd, stdout, stderr))
		load.stop()
		res.summary(t, "proxy holding through the pause, "+strconv.FormatInt(p.held.Load(), 10)+" held answers, "+load.String())
		for _, f := range res.lin.Failures {
			t.Logf("%s: %s", f.Kind, f.Problem)
		}
		if p.held.Load() == 0 {
			t.Fatalf("the proxy answered no held list during the pause: the run proves nothing:\n%s", res.stdout)
		}
		if res.code != 1 || res.outcome != "FAIL" {
			t.Fatalf("exit %d, %s; want 1, FAIL:\n%s%s", res.code, res.outcome, res.stdout, res.stderr)
		}
		if !staleThrough(res.lin, proxy.URL+"/v1") {
			t.Errorf("no failure counts lists through the proxy older than the bound, naming a list and the update it missed (kinds %q):\n%s", kindsOf(res.lin), res.stdout)
		}
	})
}

// staleThrough reports whether a failure of res counts lists through
// base older than the bound, naming the first such list and the update it
// missed.
func staleThrough(res conformancetest.Result, base string) bool {
	for _, f := range res.Failures {
		if f.Kind != conformancetest.KindOlderThanBound || f.ByBaseURL[base] == 0 {
			continue
		}
		var list, missed bool
		for _, o := range f.Operations {
			list = list || o.Role == "list" && o.Kind == "list"
			missed = missed || o.Role == "missed" && o.Kind == "update"
		}
		if list && missed {
			return true
		}
	}
	return false
}
