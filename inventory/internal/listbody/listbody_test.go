package listbody

import (
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// The tests' entries: inventory's Item and Change, with the same JSON.
type (
	Item struct {
		PetID    int64  `json:"petId"`
		Quantity int    `json:"quantity"`
		Status   string `json:"status"`
	}
	Change struct {
		Item
		Deleted bool
	}
	listState = State[Item, Change]
)

const (
	StatusAvailable = "available"
	StatusPending   = "pending"
	StatusSold      = "sold"
	MaxQuantity     = 2147483647
	GzipMinBytes    = 1400
)

var format = &Format[Item, Change]{
	ID: func(it Item) int64 { return it.PetID },
	AppendJSON: func(b []byte, it Item) []byte {
		b = append(b, `{"petId":`...)
		b = strconv.AppendInt(b, it.PetID, 10)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, int64(it.Quantity), 10)
		b = append(b, `,"status":"`...)
		b = append(b, it.Status...)
		return append(b, `"}`...)
	},
	Change:  func(c Change) (Item, bool) { return c.Item, c.Deleted },
	GzipMin: GzipMinBytes,
}

func fullState(cursor string, items []Item, prev *listState) *listState {
	return format.Full(cursor, items, prev)
}

func byPetID(a, b Item) int { return cmp.Compare(a.PetID, b.PetID) }

func newSegment(items []Item) *segment[Item] { return format.newSegment(items) }

// gunzip decodes a state's gzip body with compress/gzip, which checks the
// trailer's CRC-32 and size.
func gunzip(t testing.TB, pieces [][]byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(bytes.Join(pieces, nil)))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the gzip body does not decode: %v", err)
	}
	return b
}

// TestCRCPart: a piece's CRC combined after another's is the CRC of both.
func TestCRCPart(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 7, 64, 1000, 70_000} {
		a := make([]byte, r.IntN(3000))
		b := make([]byte, n)
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte(nil), a...), b...))
		if got := newCRCPart(b).then(crc32.ChecksumIEEE(a)); got != want {
			t.Errorf("crcPart of %d bytes after %d: %08x; want %08x", n, len(a), got, want)
		}
	}
}

// TestGzipBody: the gzip body of every state decodes to exactly its
// identity body, in one piece or many, after changes, and an empty or
// small list has none.
func TestGzipBody(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 20, 30, 200, segmentSize, 5*segmentSize + 3} {
		items := make([]Item, n)
		for i := range items {
			items[i] = randomItem(r, int64(i*3+1))
		}
		st := fullState("a", items, nil)
		for round := range 4 {
			identity := st.body()
			if len(identity) < GzipMinBytes {
				if st.GzipPieces != nil {
					t.Errorf("%d pets: a gzip body for %d bytes, under GzipMinBytes", n, len(identity))
				}
			} else {
				got := gunzip(t, st.GzipPieces)
				if !bytes.Equal(got, identity) {
					t.Fatalf("%d pets, round %d: the gzip body decodes to %d bytes differing from the %d of the identity body", n, round, len(got), len(identity))
				}
				if want := strconv.Itoa(len(bytes.Join(st.GzipPieces, nil))); st.GzipContentLength[0] != want {
					t.Errorf("%d pets: gzip Content-Length %s; the body has %s bytes", n, st.GzipContentLength[0], want)
				}
				if len(identity) > 6*1024 && 4*len(bytes.Join(st.GzipPieces, nil)) > len(identity) {
					t.Errorf("%d pets: gzip body %s bytes for %d: not even a quarter", n, st.GzipContentLength[0], len(identity))
				}
			}
			// Updates, inserts (before the first pet too) and deletes.
			var log []Change
			for range 5 {
				id := int64(r.IntN(3*max(n, 1)+10)) - 5
				log = append(log, Change{Item: randomItem(r, id), Deleted: r.IntN(4) == 0})
			}
			st = st.Apply("v"+strconv.Itoa(round), log)
		}
	}
}

// TestOneChangeRecompressesOneSegment: after one update, the gzip body
// shares the compressed pieces of every other segment.
func TestOneChangeRecompressesOneSegment(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	items := make([]Item, 50*segmentSize)
	for i := range items {
		items[i] = randomItem(r, int64(i+1))
	}
	st := fullState("a", items, nil)
	next := st.Apply("b", []Change{{Item: Item{PetID: 20_000, Quantity: 1, Status: StatusSold}}})
	recompressed := 0
	for i := range next.segs {
		if &next.segs[i].gz[0] != &st.segs[i].gz[0] {
			recompressed++
		}
	}
	if recompressed != 1 {
		t.Errorf("%d of %d segments compressed again after one update; want 1", recompressed, len(next.segs))
	}
	if !bytes.Equal(gunzip(t, next.GzipPieces), next.body()) {
		t.Error("after one update, the gzip body does not decode to the identity body")
	}
	// A store without changes, read whole again with one pet changed,
	// keeps the other segments' compression too.
	changed := append([]Item(nil), items...)
	changed[40_000].Quantity = (changed[40_000].Quantity + 1) % (MaxQuantity + 1)
	again := fullState("", changed, st)
	kept := 0
	for i := range again.segs {
		if again.segs[i] == st.segs[i] {
			kept++
		}
	}
	if kept != len(st.segs)-1 || !bytes.Equal(gunzip(t, again.GzipPieces), again.body()) {
		t.Errorf("a full read with one change kept %d of %d segments; want all but one", kept, len(st.segs))
	}
}

// TestListETags: the tags name the state (its cursor), differ between
// identity and gzip, and, for a store without cursors, follow the body.
func TestListETags(t *testing.T) {
	items := []Item{{PetID: 1, Quantity: 2, Status: StatusSold}}
	a, b := fullState("c1", items, nil), fullState("c1", nil, nil)
	if a.ETag[0] != b.ETag[0] {
		t.Errorf("one cursor, two tags: %s %s", a.ETag[0], b.ETag[0])
	}
	c := fullState("c2", items, nil)
	if c.ETag[0] == a.ETag[0] || a.GzipETag[0] == a.ETag[0] {
		t.Errorf("tags %s (c1), %s (c2), %s (c1 gzip): want all different", a.ETag[0], c.ETag[0], a.GzipETag[0])
	}
	if a.GzipETag[0] != a.ETag[0][:len(a.ETag[0])-1]+`-gzip"` {
		t.Errorf("gzip tag %s for identity tag %s", a.GzipETag[0], a.ETag[0])
	}
	x, y, z := fullState("", items, nil), fullState("", items, nil), fullState("", nil, nil)
	if x.ETag[0] != y.ETag[0] || x.ETag[0] == z.ETag[0] {
		t.Errorf("bodies' tags: %s %s (same body) %s (another)", x.ETag[0], y.ETag[0], z.ETag[0])
	}
	// A new cursor with no change is a new name for the state: a new tag.
	if renamed := a.Apply("c3", nil); renamed.ETag[0] == a.ETag[0] || !bytes.Equal(renamed.body(), a.body()) {
		t.Errorf("renamed state: tag %s (was %s)", renamed.ETag[0], a.ETag[0])
	}
}

// BenchmarkSegmentLevels compresses one segment of typical entries at the
// levels worth considering, for the choice of gzipLevel (BENCHMARKS.md).
func BenchmarkSegmentLevels(b *testing.B) {
	seg := newSegment(benchItems()[:segmentSize])
	for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, 3, flate.DefaultCompression} {
		b.Run("level="+strconv.Itoa(level), func(b *testing.B) {
			var out bytes.Buffer
			w, _ := flate.NewWriter(&out, level)
			b.SetBytes(int64(len(seg.enc)))
			b.ReportAllocs()
			for range b.N {
				out.Reset()
				w.Reset(&out)
				_, _ = w.Write(seg.enc)
				_ = w.Flush()
			}
			b.ReportMetric(float64(len(seg.enc))/float64(out.Len()), "ratio")
		})
	}
}

// body joins a state's pieces, as a client receives them.
func (st *State[E, C]) body() []byte { return bytes.Join(st.Pieces, nil) }

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
	if want := strconv.Itoa(len(st.body())); st.ContentLength[0] != want {
		t.Fatalf("Content-Length %s; the body has %s bytes", st.ContentLength[0], want)
	}
}

func randomItem(r *rand.Rand, id int64) Item {
	return Item{PetID: id, Quantity: r.IntN(MaxQuantity + 1), Status: []string{StatusAvailable, StatusPending, StatusSold}[r.IntN(3)]}
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
				cursor = st.Cursor
			}
			next := st.Apply(cursor, log)
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
	idLen, _ := strconv.Atoi(st.ContentLength[0])
	gzLen, _ := strconv.Atoi(st.GzipContentLength[0])
	if idLen < joinBelow || len(st.Pieces) == 1 {
		t.Fatalf("identity body of %d bytes in %d pieces; want it over joinBelow and in pieces", idLen, len(st.Pieces))
	}
	if gzLen >= joinGzipBelow || len(st.GzipPieces) != 1 {
		t.Fatalf("gzip body of %d bytes in %d pieces; want one piece under joinGzipBelow", gzLen, len(st.GzipPieces))
	}
	zr, err := gzip.NewReader(bytes.NewReader(st.GzipPieces[0]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(st.Pieces, nil); !bytes.Equal(got, want) {
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
		next := st.Apply("b", []Change{c})
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
	next := st.Apply("c", log)
	checkSegments(t, next)
	if len(next.segs) < len(st.segs)+2 {
		t.Errorf("%d inserts after the last segment: %d segments, was %d; want the last one split", len(log), len(next.segs), len(st.segs))
	}
	// Deleting a whole segment drops it.
	log = log[:0]
	for _, it := range st.segs[3].items {
		log = append(log, Change{Item: Item{PetID: it.PetID}, Deleted: true})
	}
	if next := st.Apply("d", log); len(next.segs) != len(st.segs)-1 {
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
		st = st.Apply("x", []Change{c})
	}
	b.ReportMetric(float64(len(st.body())), "identity-bytes")
	b.ReportMetric(float64(len(bytes.Join(st.GzipPieces, nil))), "gzip-bytes")
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
