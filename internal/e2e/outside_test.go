package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
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

// The rigs of the runs that prove the consistency run's density, its
// recovery figure and the stale-if-error bound end to end: traffic of
// other clients through the deployment while the suite runs (any staging
// has some), an HTTP delay in front of a server (the suite in CI, the
// deployment in another region), and three servers on a Sentinel set
// whose replicas lag.

// summaryEnv names the file CI prints these tests' summary lines from.
const summaryEnv = "CONSISTENCY_SUMMARY"

// outsidePets is how many pets the outside traffic updates: the last ones
// of the inventory. The suite's consistency run takes the first three
// (conformancetest's linearize.MaxPets), so with the demo inventory's
// twelve the two never write the same pet.
const outsidePets = 3

// outsidePace is how long each outside client waits between two of its
// requests: about 15 lists and 15 updates a second each, the rate at
// which the outages of the issue were measured, without starving the
// suite's clients of the machine's two cores.
const outsidePace = 30 * time.Millisecond

// outsideTimeout bounds one outside request: longer than any store
// time-out of the servers here, so that a slow answer is counted by its
// status, not as "no answer".
const outsideTimeout = 15 * time.Second

// outsideAnswer is one answer an outside client got.
type outsideAnswer struct {
	base     int // the index of the base URL it was sent through
	update   bool
	status   int // 0: no answer (a transport error or time-out)
	stale    bool
	sent, at time.Time
}

// outsideLoad is traffic of other clients than the suite's through the
// deployment: each lists (a plain list, as a storefront sends) and
// updates one of the load's own pets in turn, through each base URL in
// turn, and keeps every answer.
type outsideLoad struct {
	bases   []string
	pets    []int64
	initial map[int64]int64 // the load's pets before it began
	client  *http.Client
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	answers []outsideAnswer
}

// startOutside starts that many outside clients through bases, on the
// last outsidePets pets of the inventory; they run until stop (or
// restore), and are stopped when the test ends.
func startOutside(t *testing.T, bases []string, clients int) *outsideLoad {
	t.Helper()
	before := strictQuantities(t, bases[0])
	ids := slices.Sorted(maps.Keys(before))
	if len(ids) < 3+outsidePets {
		t.Fatalf("the inventory has %d pets: the outside traffic needs %d besides the suite's three", len(ids), outsidePets)
	}
	l := &outsideLoad{bases: bases, pets: ids[len(ids)-outsidePets:], initial: map[int64]int64{},
		client: &http.Client{Timeout: outsideTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}}
	for _, id := range l.pets {
		l.initial[id] = before[id]
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for c := range clients {
		l.wg.Go(func() { l.run(ctx, c) })
	}
	t.Cleanup(l.stop)
	return l
}

// run is one outside client: list, update, list, … until ctx ends.
func (l *outsideLoad) run(ctx context.Context, c int) {
	rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
	for i := 0; ctx.Err() == nil; i++ {
		a := outsideAnswer{base: (c + i) % len(l.bases), update: i%2 == 1, sent: time.Now()}
		base := l.bases[a.base]
		var status int
		var header http.Header
		if a.update {
			pet := l.pets[rng.IntN(len(l.pets))]
			status, header = l.send(ctx, http.MethodPatch, base+"/inventory/"+strconv.FormatInt(pet, 10), fmt.Sprintf(`{"quantity":%d}`, 500_000+rng.IntN(100_000)))
		} else {
			status, header = l.send(ctx, http.MethodGet, base+"/inventory", "")
		}
		if ctx.Err() != nil {
			return // cut by stop: not an answer of the deployment
		}
		a.status, a.stale, a.at = status, staleMarked(header), time.Now()
		l.mu.Lock()
		l.answers = append(l.answers, a)
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(outsidePace): // the client's think time, not a wait for a state
		}
	}
}

// send sends one request with the key and returns its status (0 for no
// answer) and headers, the body read whole.
func (l *outsideLoad) send(ctx context.Context, method, url, body string) (int, http.Header) {
	rep, err := proctest.Do(ctx, l.client, testKey, method, url, body)
	if err != nil {
		return 0, nil
	}
	return rep.Status, rep.Header
}

// stop ends the traffic and waits for every client.
func (l *outsideLoad) stop() { l.cancel(); l.wg.Wait() }

// restore stops the traffic and sets the load's pets back to the
// quantities they had before it began, retrying an update answered 503
// (the deployment still recovering) for up to a minute.
func (l *outsideLoad) restore(t *testing.T) {
	t.Helper()
	l.stop()
	for _, id := range l.pets {
		err := redistest.Poll(time.Minute, func() error {
			status, _ := l.send(t.Context(), http.MethodPatch, l.bases[0]+"/inventory/"+strconv.FormatInt(id, 10), fmt.Sprintf(`{"quantity":%d}`, l.initial[id]))
			if status != http.StatusOK {
				return fmt.Errorf("restoring pet %d: answered %d", id, status)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// tally counts answers by status ("no answer" for none): of the lists, or
// of the updates.
func (l *outsideLoad) tally(updates bool) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, a := range l.answers {
		if a.update == updates {
			out[statusName(a.status)]++
		}
	}
	return out
}

// lists returns the lists answered so far.
func (l *outsideLoad) lists() []outsideAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []outsideAnswer
	for _, a := range l.answers {
		if !a.update {
			out = append(out, a)
		}
	}
	return out
}

// staleLists counts the lists answered 200 marked stale.
func (l *outsideLoad) staleLists() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.answers {
		if !a.update && a.status == http.StatusOK && a.stale {
			n++
		}
	}
	return n
}

// longest is the longest time an outside request took to be answered.
func (l *outsideLoad) longest() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	for _, a := range l.answers {
		d = max(d, a.at.Sub(a.sent))
	}
	return d
}

// updateWindow is the longest stretch between two outside updates
// answered 200 (their answers): the outage of writes as the outside
// clients saw it.
func (l *outsideLoad) updateWindow() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oks []time.Time
	for _, a := range l.answers {
		if a.update && a.status == http.StatusOK {
			oks = append(oks, a.at)
		}
	}
	slices.SortFunc(oks, time.Time.Compare)
	var d time.Duration
	for i := 1; i < len(oks); i++ {
		d = max(d, oks[i].Sub(oks[i-1]))
	}
	return d
}

// String says the load's figures for a summary line: "outside lists 812
// (200 ×800, 503 ×12), 96 marked stale; outside updates 809 (200 ×770,
// 503 ×39), none answered 200 for 2.6s at most; the longest outside
// answer 2.1s".
func (l *outsideLoad) String() string {
	return fmt.Sprintf("outside lists %s, %d marked stale; outside updates %s, none answered 200 for %v at most; the longest outside answer %v",
		tallyWords(l.tally(false)), l.staleLists(), tallyWords(l.tally(true)), l.updateWindow().Round(time.Millisecond), l.longest().Round(time.Millisecond))
}

// notOK counts what tally counted other than 200.
func notOK(tally map[string]int) int {
	n := 0
	for k, v := range tally {
		if k != "200" {
			n += v
		}
	}
	return n
}

func statusName(status int) string {
	if status == 0 {
		return "no answer"
	}
	return strconv.Itoa(status)
}

// tallyWords says a tally: "812 (200 ×800, 503 ×12)".
func tallyWords(tally map[string]int) string {
	total := 0
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tally)) {
		total += tally[k]
		parts = append(parts, fmt.Sprintf("%s ×%d", k, tally[k]))
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// staleMarked reports whether an answer's Cache-Status (RFC 9211: a list
// of members, one per cache) holds the member petinventory with the
// parameter fwd=stale: a list the server answered from its held state
// through a store outage.
func staleMarked(h http.Header) bool {
	for _, v := range h.Values("Cache-Status") {
		for member := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(member), ";")
			if strings.TrimSpace(name) != "petinventory" {
				continue
			}
			for p := range strings.SplitSeq(params, ";") {
				if strings.TrimSpace(p) == "fwd=stale" {
					return true
				}
			}
		}
	}
	return false
}

// httpDelay is the delay each way of the runs across a slow network: a
// base URL in another region, 80 ms of round trip.
const httpDelay = 40 * time.Millisecond

// delayed returns base (http://host:port/v1) reached through a TCP proxy
// of its own that delays every chunk of bytes by d each way, as a network
// with that latency does; the proxy closes when the test ends.
func delayed(t *testing.T, base string, d time.Duration) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := redistest.StartProxy(t, u.Host, d)
	u.Host = p.Addr()
	return u.String()
}

// sentinelDeployment is three examples/redis processes (Gin, Fiber, Gin)
// on a Sentinel set whose replicas lag failoverLag behind the master.
type sentinelDeployment struct {
	set *redistest.SentinelSet
	url string
}

// startSentinelDeployment starts the Sentinel set; its servers start with
// servers, once for each setting the test judges.
func startSentinelDeployment(t *testing.T) *sentinelDeployment {
	t.Helper()
	set := redistest.StartSentinel(t, redistest.SentinelOptions{ReplicaLag: failoverLag})
	return &sentinelDeployment{set: set, url: set.URL()}
}

// servers starts the three processes on the set with the key prefix
// prefix and args, and checks that the replicas still lag: every write
// then reaches them failoverLag after the master.
func (d *sentinelDeployment) servers(t *testing.T, prefix string, args ...string) []string {
	t.Helper()
	rs := startReplicas(t, d.url, prefix, threeFrameworks, args...)
	if err := d.set.LagInPlace(); err != nil {
		t.Fatal(err)
	}
	return bases(rs)
}

// density says what a run's history held, for the summary lines:
// "1234 operations, 456 updates answered 200 (321 overlapping), 500
// lists (12 stale), rounds up to 180ms".
func density(lin conformancetest.Result) string {
	c := lin.Consistency
	if c == nil {
		return "no consistency figures in the report"
	}
	return fmt.Sprintf("%d operations, %d of %d updates answered 200 (%d overlapping another request), %d lists answered 200 (%d stale), rounds up to %v",
		c.Operations, c.UpdatesOK, c.Updates, c.OverlappedUpdates, c.Lists, c.StaleLists, c.Round.Round(time.Millisecond))
}

// faultFigures says what the one fault of a run cost, for the summary
// lines: its window, the lists' availability in it, and the recovery.
func faultFigures(lin conformancetest.Result) string {
	c := lin.Consistency
	if c == nil || len(c.Faults) != 1 {
		return "no single fault in the report"
	}
	f := c.Faults[0]
	s := fmt.Sprintf("window %v; lists in it %d of %d answered 200, %d stale", f.Window.Round(time.Millisecond), f.Answered, f.Sent, f.Stale)
	if f.OldestAge != nil {
		s += fmt.Sprintf(" (oldest Age %d s)", *f.OldestAge)
	}
	s += fmt.Sprintf("; answers other than 200 %v, %d updates of unknown outcome", f.Answers, f.Unknown)
	if c.RecoveredAfter != nil {
		s += fmt.Sprintf("; recovered %v after the fault ended", c.RecoveredAfter.Round(time.Millisecond))
	} else {
		s += "; no recovery figure"
	}
	return s
}

// severOnDeath makes the master's host go down with it: once old (the
// set's master) has died, every replica's proxy is severed, the stream
// in flight to the replicas lost the moment it dies. The returned func
// stops the watch.
func severOnDeath(set *redistest.SentinelSet, old *redistest.Node) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for old.Alive() {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond): // polling for the death, not a wait for a time
			}
		}
		for _, p := range set.Proxies {
			p.Sever()
		}
	})
	return func() { close(done); wg.Wait() }
}
