package inventory

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// body joins a state's pieces, as a client receives them.
func (st *listState) body() []byte { return bytes.Join(st.pieces, nil) }

// reference is the list body of items as encoding/json writes it.
func reference(t testing.TB, items map[int64]Item) []byte {
	t.Helper()
	list := make([]Item, 0, len(items))
	for _, it := range items {
		list = append(list, it)
	}
	slices.SortFunc(list, byPetID)
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkSegments checks what the body's sharing relies on: segments are
// non-empty, ordered, disjoint, at most twice segmentSize, and their
// encodings are their items'.
func checkSegments(t *testing.T, st *listState) {
	t.Helper()
	var prev int64
	for i, sg := range st.segs {
		if len(sg.items) == 0 || len(sg.items) > 2*segmentSize {
			t.Fatalf("segment %d holds %d items", i, len(sg.items))
		}
		for j, it := range sg.items {
			if (i > 0 || j > 0) && it.PetID <= prev {
				t.Fatalf("segment %d item %d: pet %d after pet %d", i, j, it.PetID, prev)
			}
			prev = it.PetID
		}
		if !bytes.Equal(sg.enc, newSegment(sg.items).enc) {
			t.Fatalf("segment %d's encoding is not its items'", i)
		}
	}
	if want := strconv.Itoa(len(st.body())); st.contentLength[0] != want {
		t.Fatalf("Content-Length %s; the body has %s bytes", st.contentLength[0], want)
	}
}

func randomItem(r *rand.Rand, id int64) Item {
	return Item{PetID: id, Quantity: r.IntN(MaxQuantity + 1), Status: []Status{StatusAvailable, StatusPending, StatusSold}[r.IntN(3)]}
}

// TestListStateApply applies random change logs (updates, new pets,
// deletes, several changes of one pet, changes that change nothing) to
// random states and compares every body with encoding/json's.
func TestListStateApply(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 60 {
		n := []int{0, 1, 5, segmentSize, 3*segmentSize + 7, 9000}[round%6]
		held := map[int64]Item{}
		ids := r.Perm(4 * max(n, 10))
		for _, id := range ids[:n] {
			held[int64(id)-int64(n)] = randomItem(r, int64(id)-int64(n)) // negative ids too
		}
		items := make([]Item, 0, n)
		for _, it := range held {
			items = append(items, it)
		}
		slices.SortFunc(items, byPetID)
		st := fullState("c0", items, nil)
		checkSegments(t, st)
		if got, want := st.body(), reference(t, held); !bytes.Equal(got, want) {
			t.Fatalf("round %d: full body differs:\n%.300s\nwant\n%.300s", round, got, want)
		}
		for step := range 5 {
			var log []Change
			size := []int{1, 3, 50, 2500, 0}[step]
			for range size {
				id := int64(r.IntN(4*max(n, 10))) - int64(n)
				switch r.IntN(4) {
				case 0:
					log = append(log, Change{Item: Item{PetID: id}, Deleted: true})
					delete(held, id)
				case 1: // the same value again: changes nothing
					if it, ok := held[id]; ok {
						log = append(log, Change{Item: it})
						continue
					}
					fallthrough
				default:
					it := randomItem(r, id)
					log = append(log, Change{Item: it})
					held[id] = it
				}
			}
			cursor := "c" + strconv.Itoa(step+1)
			if len(log) == 0 {
				cursor = st.cursor
			}
			next := st.apply(cursor, log)
			checkSegments(t, next)
			if got, want := next.body(), reference(t, held); !bytes.Equal(got, want) {
				t.Fatalf("round %d step %d (%d changes): body differs:\n%.300s\nwant\n%.300s", round, step, len(log), got, want)
			}
			if len(log) == 0 && next != st {
				t.Fatalf("round %d: an empty log with the same cursor built a new state", round)
			}
			st = next
		}
	}
}

// TestBodiesJoinedOncePerState: a body under its join size is one piece
// (one write per answer), the gzip body up to a larger size than the
// identity body, and both still decode to the same bytes.
func TestBodiesJoinedOncePerState(t *testing.T) {
	items := make([]Item, 10_000)
	for i := range items {
		items[i] = Item{PetID: int64(i + 1), Quantity: i % 100, Status: StatusPending}
	}
	st := fullState("j", items, nil)
	idLen, _ := strconv.Atoi(st.contentLength[0])
	gzLen, _ := strconv.Atoi(st.gzContentLength[0])
	if idLen < joinBelow || len(st.pieces) == 1 {
		t.Fatalf("identity body of %d bytes in %d pieces; want it over joinBelow and in pieces", idLen, len(st.pieces))
	}
	if gzLen >= joinGzipBelow || len(st.gzPieces) != 1 {
		t.Fatalf("gzip body of %d bytes in %d pieces; want one piece under joinGzipBelow", gzLen, len(st.gzPieces))
	}
	zr, err := gzip.NewReader(bytes.NewReader(st.gzPieces[0]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(st.pieces, nil); !bytes.Equal(got, want) {
		t.Fatalf("the joined gzip body decodes to %d bytes, not the %d of the identity body", len(got), len(want))
	}
}

// TestOneChangeReencodesOneSegment is the point of the segments: after one
// update, the next body shares every segment but one with the previous.
func TestOneChangeReencodesOneSegment(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 100 * segmentSize
	items := make([]Item, n)
	for i := range items {
		items[i] = randomItem(r, int64(i+1))
	}
	st := fullState("a", items, nil)
	for _, c := range []Change{
		{Item: Item{PetID: 51234, Quantity: 7, Status: StatusSold}}, // an update
		{Item: Item{PetID: 777}, Deleted: true},                     // a delete
	} {
		next := st.apply("b", []Change{c})
		changed := 0
		for i := range next.segs {
			if next.segs[i] != st.segs[i] {
				changed++
			}
		}
		if changed != 1 || len(next.segs) != len(st.segs) {
			t.Errorf("change of pet %d: %d of %d segments rebuilt (now %d); want 1", c.PetID, changed, len(st.segs), len(next.segs))
		}
	}
	// A segment that inserts grow past twice the size is split.
	var log []Change
	for i := range 2*segmentSize + 1 {
		log = append(log, Change{Item: Item{PetID: int64(n + 1 + i), Status: StatusPending}})
	}
	next := st.apply("c", log)
	checkSegments(t, next)
	if len(next.segs) < len(st.segs)+2 {
		t.Errorf("%d inserts after the last segment: %d segments, was %d; want the last one split", len(log), len(next.segs), len(st.segs))
	}
	// Deleting a whole segment drops it.
	log = log[:0]
	for _, it := range st.segs[3].items {
		log = append(log, Change{Item: Item{PetID: it.PetID}, Deleted: true})
	}
	if next := st.apply("d", log); len(next.segs) != len(st.segs)-1 {
		t.Errorf("deleting segment 3's pets: %d segments, was %d", len(next.segs), len(st.segs))
	}
}

// BenchmarkListAfterOneUpdate measures what one update costs the next
// list at 1 000 000 pets: the re-encoding and re-compression of one
// segment, the gzip body's CRC by combination and both bodies' pieces
// (compare BenchmarkListFull, the whole body).
func BenchmarkListAfterOneUpdate(b *testing.B) {
	st := benchState(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c := Change{Item: Item{PetID: int64(i%1_000_000 + 1), Quantity: i % 1000, Status: StatusAvailable}}
		st = st.apply("x", []Change{c})
	}
	b.ReportMetric(float64(len(st.body())), "identity-bytes")
	b.ReportMetric(float64(len(bytes.Join(st.gzPieces, nil))), "gzip-bytes")
}

// BenchmarkListFull builds the whole body of 1 000 000 pets, identity and
// gzip, as a full read does.
func BenchmarkListFull(b *testing.B) {
	items := benchItems()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		fullState("x", items, nil)
	}
}

func benchItems() []Item {
	items := make([]Item, 1_000_000)
	for i := range items {
		items[i] = Item{PetID: int64(i + 1), Quantity: i % 1000, Status: StatusAvailable}
	}
	return items
}

func benchState(b *testing.B) *listState {
	b.Helper()
	return fullState("x", benchItems(), nil)
}

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
		slices.SortFunc(ch.Items, byPetID)
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
