package inventory

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
)

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

func TestCRC32Combine(t *testing.T) {
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
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))); got != want {
			t.Errorf("combine of %d and %d bytes: %08x; want %08x", len(a), n, got, want)
		}
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
				if st.gzPieces != nil {
					t.Errorf("%d pets: a gzip body for %d bytes, under GzipMinBytes", n, len(identity))
				}
			} else {
				got := gunzip(t, st.gzPieces)
				if !bytes.Equal(got, identity) {
					t.Fatalf("%d pets, round %d: the gzip body decodes to %d bytes differing from the %d of the identity body", n, round, len(got), len(identity))
				}
				if want := strconv.Itoa(len(bytes.Join(st.gzPieces, nil))); st.gzContentLength[0] != want {
					t.Errorf("%d pets: gzip Content-Length %s; the body has %s bytes", n, st.gzContentLength[0], want)
				}
				if len(identity) > 6*1024 && 4*len(bytes.Join(st.gzPieces, nil)) > len(identity) {
					t.Errorf("%d pets: gzip body %s bytes for %d: not even a quarter", n, st.gzContentLength[0], len(identity))
				}
			}
			// Updates, inserts (before the first pet too) and deletes.
			var log []Change
			for range 5 {
				id := int64(r.IntN(3*max(n, 1)+10)) - 5
				log = append(log, Change{Item: randomItem(r, id), Deleted: r.IntN(4) == 0})
			}
			st = st.apply("v"+strconv.Itoa(round), log)
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
	next := st.apply("b", []Change{{Item: Item{PetID: 20_000, Quantity: 1, Status: StatusSold}}})
	recompressed := 0
	for i := range next.segs {
		if &next.segs[i].gz[0] != &st.segs[i].gz[0] {
			recompressed++
		}
	}
	if recompressed != 1 {
		t.Errorf("%d of %d segments compressed again after one update; want 1", recompressed, len(next.segs))
	}
	if !bytes.Equal(gunzip(t, next.gzPieces), next.body()) {
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
	if kept != len(st.segs)-1 || !bytes.Equal(gunzip(t, again.gzPieces), again.body()) {
		t.Errorf("a full read with one change kept %d of %d segments; want all but one", kept, len(st.segs))
	}
}

// TestListETags: the tags name the state (its cursor), differ between
// identity and gzip, and, for a store without cursors, follow the body.
func TestListETags(t *testing.T) {
	items := []Item{{PetID: 1, Quantity: 2, Status: StatusSold}}
	a, b := fullState("c1", items, nil), fullState("c1", nil, nil)
	if a.etag[0] != b.etag[0] {
		t.Errorf("one cursor, two tags: %s %s", a.etag[0], b.etag[0])
	}
	c := fullState("c2", items, nil)
	if c.etag[0] == a.etag[0] || a.gzETag[0] == a.etag[0] {
		t.Errorf("tags %s (c1), %s (c2), %s (c1 gzip): want all different", a.etag[0], c.etag[0], a.gzETag[0])
	}
	if a.gzETag[0] != a.etag[0][:len(a.etag[0])-1]+`-gzip"` {
		t.Errorf("gzip tag %s for identity tag %s", a.gzETag[0], a.etag[0])
	}
	x, y, z := fullState("", items, nil), fullState("", items, nil), fullState("", nil, nil)
	if x.etag[0] != y.etag[0] || x.etag[0] == z.etag[0] {
		t.Errorf("bodies' tags: %s %s (same body) %s (another)", x.etag[0], y.etag[0], z.etag[0])
	}
	// A new cursor with no change is a new name for the state: a new tag.
	if renamed := a.apply("c3", nil); renamed.etag[0] == a.etag[0] || !bytes.Equal(renamed.body(), a.body()) {
		t.Errorf("renamed state: tag %s (was %s)", renamed.etag[0], a.etag[0])
	}
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                              false, // no header: identity (see acceptsGzip)
		"gzip":                          true,
		"GZIP":                          true,
		"x-gzip":                        true,
		"gzip, deflate, br":             true,
		"br, deflate":                   false,
		"deflate, gzip;q=1.0, *;q=0.5":  true,
		"gzip;q=0":                      false,
		"gzip;q=0.000":                  false,
		"gzip;q=0.001":                  true,
		"gzip; q=0.5":                   true,
		"gzip ;q=0.5":                   true,
		"gzip;Q=0.5":                    true,
		"*":                             true,
		"*;q=0":                         false,
		"*, gzip;q=0":                   false,
		"gzip;q=0, *":                   false,
		"identity":                      false,
		"identity;q=0, gzip":            true,
		"identity;q=0, *":               true,
		"identity;q=0":                  false, // no coding acceptable: identity all the same
		"gzip;q=0.5, identity":          false, // identity preferred
		"gzip;q=0.5, identity;q=0.5":    true,  // a tie: the smaller body
		"gzip;q=0.5, identity;q=0.4":    true,
		"gzip;q=0.5, *;q=0":             true, // identity refused by *
		"gzip;q=0.5, identity, *;q=0":   false,
		"gzip;q=2":                      false, // not a qvalue: ignored
		"gzip;q=1.5":                    false,
		"gzip;q=1.000":                  true,
		"gzip;q=0.1234":                 false,
		"gzip;q=":                       false,
		"gzip;q=abc":                    false,
		"gzip;q=abc, x-gzip":            true,
		"gzip;level=9":                  true, // unknown parameter: ignored
		" , ,gzip":                      true,
		"gzipx":                         false,
		"x-gzip;q=0, gzip":              false, // one coding named twice: the refusal wins
		"gzip;q=0, gzip":                false,
		"gzip, gzip;q=0.5, identity":    false, // gzip at its lowest, 0.5, under identity
		"identity;q=0, identity, gzip":  true,
		"gzip;q=0.3, deflate;q=0.9":     true,
		"compress;q=0.5, gzip;q=0.4, *": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v; want %v", header, got, want)
		}
	}
}

func TestNoneMatch(t *testing.T) {
	const tag = `"abc"`
	for header, want := range map[string]bool{
		`"abc"`:               true,
		`W/"abc"`:             true,
		`"x", "abc"`:          true,
		`"x",W/"abc"`:         true,
		`*`:                   true,
		`"abc-gzip"`:          false,
		`"ab"`:                false,
		`abc`:                 false,
		`"a,b", "abc"`:        true, // a comma inside a tag
		`"x", garbage, "abc"`: false,
		`"abc`:                false,
		``:                    false,
		` "abc" `:             true,
		`w/"abc"`:             false, // W/ is case-sensitive
	} {
		if got := noneMatch(header, tag); got != want {
			t.Errorf("noneMatch(%q, %s) = %v; want %v", header, tag, got, want)
		}
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
