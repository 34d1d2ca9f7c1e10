package inventory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// gateStore is a small ChangeLister store whose reads can be held at a
// gate, after they have read the state, to order them against writes.
type gateStore struct {
	mu      sync.Mutex
	items   map[int64]Item
	version int
	reads   atomic.Int64
	gate    chan struct{} // when not nil, reads wait for it to close
}

func (s *gateStore) List(ctx context.Context) ([]Item, error) {
	ch, err := s.ListChanges(ctx, "")
	return ch.Items, err
}

func (s *gateStore) ListChanges(ctx context.Context, since string) (Changes, error) {
	s.mu.Lock()
	cursor := strconv.Itoa(s.version)
	ch := Changes{Cursor: cursor}
	if since != cursor {
		ch.Full = true
		for _, it := range s.items {
			ch.Items = append(ch.Items, it)
		}
		slices.SortFunc(ch.Items, func(a, b Item) int { return cmp.Compare(a.PetID, b.PetID) })
	}
	gate := s.gate
	s.reads.Add(1) // counted once the state is read
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return Changes{}, Unavailable(ctx.Err())
		}
	}
	return ch, nil
}

func (s *gateStore) SetQuantity(_ context.Context, id int64, q int) (Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	if !ok {
		return Item{}, ErrNotFound
	}
	it.Quantity = q
	s.items[id] = it
	s.version++
	return it, nil
}

func (s *gateStore) Put(_ context.Context, items ...Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		s.items[it.PetID] = it
	}
	s.version++
	return nil
}

func (s *gateStore) Delete(context.Context, int64) error { return ErrNotFound }

func (s *gateStore) setGate(g chan struct{}) {
	s.mu.Lock()
	s.gate = g
	s.mu.Unlock()
}

func newGateAPI(t *testing.T, timeout time.Duration) (*API, *gateStore) {
	t.Helper()
	s := &gateStore{items: map[int64]Item{1: {PetID: 1, Quantity: 1, Status: StatusAvailable}}}
	a, err := New(s, WithAPIKeys("k"), WithStoreTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	return a, s
}

func listBody(t *testing.T, a *API) (int, string) {
	t.Helper()
	resp := a.serve(context.Background(), &wire.Request{Method: "GET", Route: int(RouteList), Authorization: "Bearer k"})
	var b bytes.Buffer
	if _, err := wire.NewPiecesReader(resp.Pieces).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return resp.Status, b.String()
}

// waitFor polls cond until it holds, or fails the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

func (l *lister) queuedWaiters() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queued == nil {
		return 0
	}
	return l.queued.waiters
}

// Lists that arrive while a read runs share the one read after it: two
// store reads for 21 lists, all answered with the same body.
func TestConcurrentListsShareReads(t *testing.T) {
	a, s := newGateAPI(t, 10*time.Second)
	gate := make(chan struct{})
	s.setGate(gate)
	bodies := make(chan string, 21)
	list := func() {
		status, body := listBody(t, a)
		if status != 200 {
			body = fmt.Sprintf("status %d: %s", status, body)
		}
		bodies <- body
	}
	go list()
	waitFor(t, "the first read is held", func() bool { return s.reads.Load() == 1 })
	for range 20 {
		go list()
	}
	waitFor(t, "20 lists wait for the next read", func() bool { return a.lists.queuedWaiters() == 20 })
	close(gate)
	want := `[{"petId":1,"quantity":1,"status":"available"}]`
	for range 21 {
		if got := <-bodies; got != want {
			t.Errorf("a list answered %s; want %s", got, want)
		}
	}
	if n := s.reads.Load(); n != 2 {
		t.Errorf("%d store reads for 21 lists; want 2 (the one in progress, and one shared by the 20 after it)", n)
	}
}

// A list never joins a read that began before it: an update answered
// before the list started is in its answer, even while an older read is
// still running.
func TestListDoesNotJoinAnOlderRead(t *testing.T) {
	a, s := newGateAPI(t, 10*time.Second)
	gate := make(chan struct{})
	s.setGate(gate)
	first := make(chan string, 1)
	go func() { _, body := listBody(t, a); first <- body }()
	waitFor(t, "the first read has read the state and is held", func() bool { return s.reads.Load() == 1 })
	if _, err := a.svc.SetQuantity(context.Background(), 1, 42); err != nil {
		t.Fatal(err)
	}
	second := make(chan string, 1)
	go func() { _, body := listBody(t, a); second <- body }()
	waitFor(t, "the second list waits", func() bool { return a.lists.queuedWaiters() == 1 })
	close(gate)
	if got := <-first; !strings.Contains(got, `"quantity":1,`) {
		t.Errorf("the first list answered %s; want the state its read saw (quantity 1)", got)
	}
	if got := <-second; !strings.Contains(got, `"quantity":42,`) {
		t.Errorf("the list that started after the update answered %s; want quantity 42", got)
	}
}

// A read that outlasts one list's store timeout goes on: that list gets
// 503, and the read's result serves the lists after it. Preload waits for
// it whatever the store timeout.
func TestReadOutlastsOneList(t *testing.T) {
	a, s := newGateAPI(t, 20*time.Millisecond)
	gate := make(chan struct{})
	s.setGate(gate)
	preloaded := make(chan error, 1)
	go func() { preloaded <- a.Preload(context.Background()) }()
	waitFor(t, "Preload's read is held", func() bool { return s.reads.Load() == 1 })
	if status, body := listBody(t, a); status != 503 {
		t.Fatalf("a list while the read is held past its timeout: %d %s; want 503", status, body)
	}
	select {
	case err := <-preloaded:
		t.Fatalf("Preload returned %v before its read ended", err)
	default:
	}
	close(gate)
	if err := <-preloaded; err != nil {
		t.Fatalf("Preload: %v", err)
	}
	s.setGate(nil)
	if status, body := listBody(t, a); status != 200 || !strings.Contains(body, `"petId":1`) {
		t.Errorf("the list after the read: %d %s", status, body)
	}
}
