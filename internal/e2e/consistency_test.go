package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// The consistency check against replicas broken on purpose: each is the
// real inventory.API over one shared memory store, with one rule of
// consistency broken by a small wrapper of the store or of the handler.
// Every broken deployment must fail in every run (go test -count=N runs
// each N times).

// consistencyFor is how long each broken deployment is exercised.
const consistencyFor = 1500 * time.Millisecond

// staleCache answers lists from a copy up to maxAge old, as a cache in
// front of one replica that ignores Cache-Control: no-store.
func staleCache(next http.Handler, maxAge time.Duration) http.Handler {
	var (
		mu   sync.Mutex
		rec  *recorded
		when time.Time
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if rec == nil || time.Since(when) > maxAge {
			rec, when = serveRecorded(next, r), time.Now()
		}
		writeRecorded(w, rec)
	})
}

// readBackStore answers an update with the entry read back after the
// write's lock is dropped: another client's write may land in between.
type readBackStore struct{ inventory.Store }

func (s readBackStore) SetQuantity(ctx context.Context, id int64, q int) (inventory.Item, error) {
	if _, err := s.Store.SetQuantity(ctx, id, q); err != nil {
		return inventory.Item{}, err
	}
	time.Sleep(time.Millisecond)
	items, err := s.Store.List(ctx)
	if err != nil {
		return inventory.Item{}, err
	}
	for _, it := range items {
		if it.PetID == id {
			return it, nil
		}
	}
	return inventory.Item{}, inventory.ErrNotFound
}

// twoInstantsStore assembles a list from two reads: the first pet from
// one, the rest from another a few milliseconds later.
type twoInstantsStore struct{ inventory.Store }

func (s twoInstantsStore) List(ctx context.Context) ([]inventory.Item, error) {
	a, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	time.Sleep(3 * time.Millisecond)
	b, err := s.Store.List(ctx)
	if err != nil || len(a) == 0 || len(b) == 0 {
		return b, err
	}
	return append(a[:1:1], b[1:]...), nil
}

// changeFeed is the change stream of a store that every write goes
// through; a replica's copy of the list is fed by it.
type changeFeed struct {
	inventory.Store
	mu   sync.Mutex
	subs []func(id int64, q int)
}

func (f *changeFeed) SetQuantity(ctx context.Context, id int64, q int) (inventory.Item, error) {
	f.mu.Lock() // the stream's order is the store's
	defer f.mu.Unlock()
	it, err := f.Store.SetQuantity(ctx, id, q)
	if err == nil {
		for _, sub := range f.subs {
			sub(id, q)
		}
	}
	return it, err
}

// skippingReplica keeps its own copy of the list, fed by the feed, and
// skips every tenth change.
type skippingReplica struct {
	*changeFeed
	mu    sync.Mutex
	copy  []inventory.Item
	count int
}

func newSkippingReplica(t *testing.T, f *changeFeed) *skippingReplica {
	r := &skippingReplica{changeFeed: f, copy: listStore(t, f.Store)}
	f.subs = append(f.subs, func(id int64, q int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.count++; r.count%10 == 0 {
			return // skipped: this replica never sees the change
		}
		for i := range r.copy {
			if r.copy[i].PetID == id {
				r.copy[i].Quantity = q
			}
		}
	})
	return r
}

func (r *skippingReplica) List(context.Context) ([]inventory.Item, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]inventory.Item(nil), r.copy...), nil
}

// brokenDeployment is three replicas, one or all of them broken.
type brokenDeployment struct {
	name string
	// kinds are the kinds the first failure of the check may be of
	// (nil: any).
	kinds []string
	// bases starts the replicas and returns their base URLs.
	bases func(t *testing.T) []string
}

var brokenDeployments = []brokenDeployment{
	{"a replica behind a cache that answers lists up to 300 ms old", []string{conformancetest.KindMissedUpdate}, func(t *testing.T) []string {
		api := newAPI(t, openMemory(t, seed...))
		return []string{serveNetHTTP(t, nil, api), serveNetHTTP(t, staleCache(api, 300*time.Millisecond), api), serveNetHTTP(t, nil, api)}
	}},
	{"an update answered with the entry read back after its lock is dropped", []string{conformancetest.KindAnotherWrite}, func(t *testing.T) []string {
		api := newAPI(t, readBackStore{openMemory(t, seed...)})
		return []string{serveNetHTTP(t, nil, api), serveNetHTTP(t, nil, api), serveNetHTTP(t, nil, api)}
	}},
	{"a list assembled from two instants", nil, func(t *testing.T) []string {
		api := newAPI(t, twoInstantsStore{openMemory(t, seed...)})
		return []string{serveNetHTTP(t, nil, api), serveNetHTTP(t, nil, api), serveNetHTTP(t, nil, api)}
	}},
	// A skipped change is missed by a later list only when no update of
	// the same pet overwrites it first; on a loaded machine, with few
	// operations, the run may instead show it as a set of requests that
	// cannot be ordered, named request by request.
	{"a replica that skips one change in ten", []string{conformancetest.KindMissedUpdate, conformancetest.KindWriteTakenBack, conformancetest.KindUnorderable}, func(t *testing.T) []string {
		feed := &changeFeed{Store: openMemory(t, seed...)}
		good := newAPI(t, feed)
		skipping := newAPI(t, newSkippingReplica(t, feed))
		return []string{serveNetHTTP(t, nil, good), serveNetHTTP(t, nil, skipping), serveNetHTTP(t, nil, good)}
	}},
}

// TestConsistencyCatchesBrokenReplicas: each broken deployment fails
// consistency/linearizable, in words that say what happened; its saved
// history, judged again without the deployment, gives the same verdict
// in the same words.
func TestConsistencyCatchesBrokenReplicas(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	for _, d := range brokenDeployments {
		t.Run(d.name, func(t *testing.T) {
			bases := d.bases(t)
			history := filepath.Join(t.TempDir(), "history.json")
			rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: bases[0], Replicas: bases[1:], APIKey: testKey,
				Run: "^consistency/", Consistency: consistencyFor, ConsistencyHistory: history})
			if err != nil {
				t.Fatal(err)
			}
			res, _ := rep.Result("consistency/linearizable")
			if res.Outcome != conformancetest.Fail {
				t.Fatalf("%s, want a failure: %s; %s", res.Outcome, res.Reason, res.Detail)
			}
			if k := res.Failures[0].Kind; k == "" || d.kinds != nil && !slices.Contains(d.kinds, k) {
				t.Errorf("the first failure is of kind %q, want one of %q: %s", k, d.kinds, res.Failures[0].Problem)
			}
			t.Logf("caught: %s\n%s", res.Failures[0].Problem, res.Detail)
			again, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: history})
			if err != nil {
				t.Fatal(err)
			}
			if got := again.Results[0]; got.Outcome != res.Outcome || !slices.Equal(kindsOf(got), kindsOf(res)) || !slices.Equal(problemsOf(got.Failures), problemsOf(res.Failures)) {
				t.Errorf("replayed: %s %q; the run: %s %q", got.Outcome, problemsOf(got.Failures), res.Outcome, problemsOf(res.Failures))
			}
		})
	}
}

func problemsOf(fs []conformancetest.Failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Problem)
	}
	return out
}

// TestConsistencyPassesReplicas: three correct replicas over one store,
// on the three transports, pass.
func TestConsistencyPassesReplicas(t *testing.T) {
	api := newAPI(t, openMemory(t, seed...))
	bases := []string{serveNetHTTP(t, nil, api), serveGin(t, nil, api), serveFiber(t, nil, api)}
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: bases[0], Replicas: bases[1:], APIKey: testKey,
		Run: "^consistency/", Consistency: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Pass {
		t.Fatalf("%s: %s %v", res.Outcome, res.Reason, res.Failures)
	}
	t.Log(res.Detail)
	// Strict replicas: the observed staleness is 0.
	if c := res.Consistency; c == nil || c.ObservedStaleness == nil || *c.ObservedStaleness != 0 {
		t.Errorf("observed staleness of strict replicas: %+v", c)
	}
}

// TestConsistencyStalenessCatchesStaleCache: judged against a staleness
// bound of 50 ms, the replica behind a cache that answers lists up to
// 300 ms old still fails, naming a list that missed an update by more
// than the bound, and its observed staleness is more than 50 ms.
func TestConsistencyStalenessCatchesStaleCache(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	bases := brokenDeployments[0].bases(t)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: bases[0], Replicas: bases[1:], APIKey: testKey,
		Run: "^consistency/", Consistency: consistencyFor, ConsistencyStaleness: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Fail || res.Failures[0].Kind != conformancetest.KindOlderThanBound {
		t.Fatalf("%s, want a failure beyond the bound: %s %v", res.Outcome, res.Reason, res.Failures)
	}
	c := res.Consistency
	if c == nil || c.Staleness != 50*time.Millisecond || c.ObservedStaleness != nil && *c.ObservedStaleness <= 50*time.Millisecond {
		t.Errorf("the result's bound and observed staleness: %+v", c)
	}
	t.Logf("caught: %s\n%s\nobserved staleness: %s", res.Failures[0].Problem, res.Detail, c.Observed)
}
