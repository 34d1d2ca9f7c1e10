package inventory

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// fakeClock is the lister's monotonic clock, moved by the test only.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const bound = 50 * time.Millisecond

// newStaleAPI is newGateAPI with WithMaxStaleness(bound) on a fake clock,
// preloaded at the clock's start.
func newStaleAPI(t *testing.T, timeout time.Duration) (*API, *gateStore, *fakeClock) {
	t.Helper()
	s := &gateStore{items: map[int64]Item{1: {PetID: 1, Quantity: 1, Status: StatusAvailable}}}
	a, err := New(s, WithAPIKeys("k"), WithStoreTimeout(timeout), WithMaxStaleness(bound))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1000, 0)}
	a.lists.now = clock.now
	if err := a.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a, s, clock
}

// listWith sends a list with the given Cache-Control and If-None-Match.
func listWith(t *testing.T, a *API, cacheControl, ifNoneMatch string) (status int, body, etag string) {
	t.Helper()
	resp := a.serve(context.Background(), &wire.Request{Method: "GET", Route: int(RouteList), Authorization: "Bearer k", CacheControl: cacheControl, IfNoneMatch: ifNoneMatch})
	var b strings.Builder
	if _, err := wire.NewPiecesReader(resp.Pieces).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if resp.ETag != nil {
		etag = resp.ETag[0]
	}
	return resp.Status, b.String(), etag
}

func (l *lister) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.running
}

func update(t *testing.T, a *API, qty int) {
	t.Helper()
	if _, err := a.svc.SetQuantity(context.Background(), 1, qty); err != nil {
		t.Fatal(err)
	}
}

func quantity(body string) string {
	_, after, _ := strings.Cut(body, `"quantity":`)
	q, _, _ := strings.Cut(after, ",")
	return q
}

// Within the bound a list is answered from the held state without a read
// until it is older than half the bound; then a list starts one read in
// the background and is still answered from the held state; the lists
// after that read show what it read.
func TestStaleListWithinBound(t *testing.T) {
	a, s, clock := newStaleAPI(t, 10*time.Second)
	update(t, a, 42)
	clock.advance(bound / 2)
	for range 5 {
		if status, body, _ := listWith(t, a, "", ""); status != 200 || quantity(body) != "1" {
			t.Fatalf("a list %v after the read: %d %s; want the held state (quantity 1)", bound/2, status, body)
		}
	}
	waitFor(t, "no read in progress", a.lists.idle)
	if n := s.reads.Load(); n != 1 {
		t.Fatalf("%d store reads; want 1 (Preload's): a state half the bound old is not renewed", n)
	}
	gate := make(chan struct{})
	s.setGate(gate)
	clock.advance(time.Millisecond)
	if status, body, _ := listWith(t, a, "", ""); status != 200 || quantity(body) != "1" {
		t.Fatalf("a list past half the bound: %d %s; want the held state, without waiting", status, body)
	}
	waitFor(t, "the background read is sent", func() bool { return s.reads.Load() == 2 })
	clock.advance(bound/2 - time.Millisecond) // the held state is now exactly the bound old
	for range 5 {
		if status, body, _ := listWith(t, a, "", ""); status != 200 || quantity(body) != "1" {
			t.Fatalf("a list while the background read is held: %d %s; want the held state", status, body)
		}
	}
	if n := s.reads.Load(); n != 2 {
		t.Fatalf("%d store reads; want 2: no second read while one is in progress", n)
	}
	close(gate)
	waitFor(t, "the background read ends", a.lists.idle)
	if status, body, _ := listWith(t, a, "", ""); status != 200 || quantity(body) != "42" {
		t.Fatalf("a list after the background read: %d %s; want quantity 42", status, body)
	}
}

// A held state older than the bound is never served: when the store does
// not answer, a list waits for it as without the bound, and gets 503 when
// the store timeout passes.
func TestStaleNeverPastBound(t *testing.T) {
	a, s, clock := newStaleAPI(t, 20*time.Millisecond)
	update(t, a, 42)
	gate := make(chan struct{})
	s.setGate(gate) // the store stops answering
	clock.advance(bound + time.Millisecond)
	for range 3 {
		if status, body, _ := listWith(t, a, "", ""); status != 503 {
			t.Fatalf("a list past the bound while the store does not answer: %d %s; want 503", status, body)
		}
	}
	close(gate)
	s.setGate(nil)
	waitFor(t, "the reads end", a.lists.idle)
	if status, body, _ := listWith(t, a, "", ""); status != 200 || quantity(body) != "42" {
		t.Fatalf("a list once the store answers: %d %s; want quantity 42", status, body)
	}
}

// Past the bound, a list that can read shows every update answered before
// it, as without the bound.
func TestStalePastBoundReads(t *testing.T) {
	a, s, clock := newStaleAPI(t, 10*time.Second)
	update(t, a, 42)
	clock.advance(bound + time.Millisecond)
	if status, body, _ := listWith(t, a, "", ""); status != 200 || quantity(body) != "42" {
		t.Fatalf("a list past the bound: %d %s; want quantity 42", status, body)
	}
	if n := s.reads.Load(); n != 2 {
		t.Errorf("%d store reads; want 2", n)
	}
}

// Cache-Control: no-cache reads the store, however fresh the held state.
func TestStaleNoCacheIsStrict(t *testing.T) {
	a, _, _ := newStaleAPI(t, 10*time.Second)
	update(t, a, 42)
	if _, body, _ := listWith(t, a, "", ""); quantity(body) != "1" {
		t.Fatalf("a list within the bound: %s; want the held state (quantity 1)", body)
	}
	update(t, a, 43)
	if status, body, _ := listWith(t, a, "max-age=10, No-Cache", ""); status != 200 || quantity(body) != "43" {
		t.Fatalf("a list with no-cache: %d %s; want quantity 43", status, body)
	}
}

// A 304 within the bound names the state that would be sent: the held
// one; a no-cache list of the same tag after an update is a 200.
func TestStaleNotModified(t *testing.T) {
	a, _, _ := newStaleAPI(t, 10*time.Second)
	_, body, etag := listWith(t, a, "", "")
	update(t, a, 42)
	if status, got, tag := listWith(t, a, "", etag); status != 304 || got != "" || tag != etag {
		t.Fatalf("a conditional list within the bound: %d %q %s; want 304 with the tag %s", status, got, tag, etag)
	}
	status, got, tag := listWith(t, a, "no-cache", etag)
	if status != 200 || tag == etag || quantity(got) != "42" || got == body {
		t.Fatalf("a conditional no-cache list after an update: %d %s %s; want 200 with quantity 42 and a new tag", status, got, tag)
	}
	if status, _, _ := listWith(t, a, "no-cache", tag); status != 304 {
		t.Fatalf("a conditional list of the current tag: %d; want 304", status)
	}
}

// While lists keep coming the store sees at most about two reads per
// bound, and none once lists stop.
func TestStaleReadRate(t *testing.T) {
	a, s, clock := newStaleAPI(t, 10*time.Second)
	const span = 20 * bound
	for step := time.Duration(0); step < span; step += bound / 50 {
		for range 3 {
			if status, body, _ := listWith(t, a, "", ""); status != 200 {
				t.Fatalf("list: %d %s", status, body)
			}
		}
		waitFor(t, "the background read ends", a.lists.idle)
		clock.advance(bound / 50)
	}
	reads := s.reads.Load() - 1 // Preload's
	if limit := int64(2*span/bound) + 1; reads > limit || reads < int64(span/bound) {
		t.Fatalf("%d store reads over %v of lists with a bound of %v; want between %d and %d", reads, span, bound, span/bound, limit)
	}
	clock.advance(100 * bound)
	time.Sleep(10 * time.Millisecond) // room for a read that should not come
	if n := s.reads.Load() - 1; n != reads || !a.lists.idle() {
		t.Fatalf("%d store reads once lists stopped; want %d: no list, no read", n, reads)
	}
}

// failingStore is a gateStore whose reads can fail at once, as a store
// that refuses connections does.
type failingStore struct {
	*gateStore
	fail atomic.Bool
}

func (s *failingStore) ListChanges(ctx context.Context, since string) (Changes, error) {
	if s.fail.Load() {
		s.reads.Add(1)
		return Changes{}, Unavailable(errors.New("connection refused"))
	}
	return s.gateStore.ListChanges(ctx, since)
}

func (s *failingStore) List(ctx context.Context) ([]Item, error) {
	ch, err := s.ListChanges(ctx, "")
	return ch.Items, err
}

// A background read that fails is not tried again before half the bound
// has passed since it started: a store that fails fast sees no more reads
// than one that answers, and past the bound lists take the strict path.
func TestStaleFailedRefreshIsNotRepeated(t *testing.T) {
	s := &failingStore{gateStore: &gateStore{items: map[int64]Item{1: {PetID: 1, Quantity: 1, Status: StatusAvailable}}}}
	a, err := New(s, WithAPIKeys("k"), WithStoreTimeout(10*time.Second), WithMaxStaleness(bound))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1000, 0)}
	a.lists.now = clock.now
	if err := a.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.fail.Store(true)
	clock.advance(bound/2 + time.Millisecond)
	for step := 0; step < 4; step++ {
		for range 10 {
			if status, body, _ := listWith(t, a, "", ""); status != 200 {
				t.Fatalf("a list within the bound while the store fails: %d %s; want the held state", status, body)
			}
			waitFor(t, "the background read ends", a.lists.idle)
		}
		if n := s.reads.Load(); n != 2 {
			t.Fatalf("%d store reads after lists within %v of a failed background read; want 2 (Preload's and the failed one)", n, bound/2)
		}
		clock.advance(bound / 10)
	}
	clock.advance(bound / 10) // past the bound
	if status, _, _ := listWith(t, a, "", ""); status != 503 {
		t.Fatalf("a list past the bound while the store fails: %d; want 503", status)
	}
}

func TestMaxStalenessNegative(t *testing.T) {
	if _, err := New(&gateStore{}, WithAPIKeys("k"), WithMaxStaleness(-time.Second)); err == nil || !strings.Contains(err.Error(), "WithMaxStaleness") {
		t.Fatalf("New with a negative bound: %v; want an error naming WithMaxStaleness", err)
	}
}

func TestNoCache(t *testing.T) {
	for header, want := range map[string]bool{
		"":                          false,
		"no-cache":                  true,
		"No-Cache":                  true,
		"max-age=0":                 false,
		"max-age=0, no-cache":       true,
		` no-cache="set-cookie" `:   true,
		"no-store":                  false,
		"no-cachex":                 false,
		"private, no-cache, x=\"\"": true,
	} {
		if got := noCache(header); got != want {
			t.Errorf("noCache(%q) = %v; want %v", header, got, want)
		}
	}
}
