package listbody

import (
	"cmp"
	"slices"
	"strconv"
)

// The list body is kept encoded, in segments, and shared: every list in
// flight writes the same immutable pieces, so memory does not grow with
// the number of lists, and a change re-encodes only the segments it
// touches.

// Format describes the entries of type E and the changes of type C that a
// State is built from, once for a program. Every func must be set.
type Format[E comparable, C any] struct {
	// ID is the entry's key: a list is in ascending ID order.
	ID func(E) int64
	// AppendJSON appends the entry's JSON to b.
	AppendJSON func(b []byte, e E) []byte
	// Change returns the entry a change leaves, or, when deleted, an entry
	// whose ID is the one removed.
	Change func(C) (e E, deleted bool)
	// GzipMin is the identity body's size below which a state has no gzip
	// body.
	GzipMin int
}

// segmentSize is how many entries a segment holds when segments are built
// from a full list. A segment that inserts grow past twice that is split;
// one that deletes empty is dropped.
const segmentSize = 1024

// segment is a run of entries in ascending ID order, never empty, and its
// encoding: each entry's JSON preceded by a comma, so that the body is
// "[" + segs[0].enc[1:] + segs[1].enc + … + "]" without copying anything.
// Beside it, gz is the raw DEFLATE compression of enc[1:] (the entries
// without the leading comma), sync-flushed, and crc its CRC-32, for the
// gzip body (gzip.go). It is immutable once built.
type segment[E comparable] struct {
	items []E
	enc   []byte
	gz    []byte
	crc   crcPart
}

func (f *Format[E, C]) newSegment(items []E) *segment[E] {
	const perItem = 57 // ,{"petId":…,"quantity":…,"status":"available"} with typical numbers
	enc := make([]byte, 0, len(items)*perItem)
	for _, it := range items {
		enc = f.AppendJSON(append(enc, ','), it)
	}
	return &segment[E]{items: items, enc: enc, gz: deflateBytes(enc[1:], false), crc: newCRCPart(enc[1:])}
}

// State is one state of the store, encoded. It is immutable once built: a
// change builds a new state that shares the unchanged segments. Its
// header values are one-element slices that net/http's Header map takes
// as they are; nothing may write into them.
type State[E comparable, C any] struct {
	Cursor        string   // the store's name for this state; "" for a store without changes
	Pieces        [][]byte // the identity body: "[", the segments' encodings, "]"; one piece when small
	ContentLength []string // its length, as a header value
	ETag          []string // its entity tag, as a header value

	// The gzip body, when the identity body is at least Format.GzipMin:
	// header, compressed pieces, trailer; one piece when small. nil below.
	GzipPieces        [][]byte
	GzipContentLength []string
	GzipETag          []string

	f    *Format[E, C]
	segs []*segment[E]
}

var (
	openBracket  = []byte("[")
	closeBracket = []byte("]")
	emptyList    = []byte("[]")
)

// joinBelow and joinGzipBelow are the sizes under which a body's pieces
// are joined into one, once per state, so that the answer is written with
// one call, as a bare handler writes its body; above them, the write calls
// cost little next to the bytes. The gzip body's pieces are a seventh of
// the identity's for the same pets, so its write calls weigh more and it
// is joined up to a larger size: the copy is made once per state and
// shared by every gzip list of it.
const (
	joinBelow     = 64 << 10
	joinGzipBelow = 1 << 20
)

// newState builds the body of segs, identity and gzip.
func (f *Format[E, C]) newState(cursor string, segs []*segment[E]) *State[E, C] {
	st := &State[E, C]{Cursor: cursor, f: f, segs: segs}
	if len(segs) == 0 {
		st.Pieces = [][]byte{emptyList}
	} else {
		st.Pieces = make([][]byte, 0, len(segs)+2)
		st.Pieces = append(st.Pieces, openBracket, segs[0].enc[1:])
		for _, sg := range segs[1:] {
			st.Pieces = append(st.Pieces, sg.enc)
		}
		st.Pieces = append(st.Pieces, closeBracket)
	}
	var n int
	st.Pieces, n = joinSmall(st.Pieces, joinBelow)
	st.ContentLength = []string{strconv.Itoa(n)}
	st.ETag, st.GzipETag = etags(cursor, st.Pieces)
	if n >= f.GzipMin {
		st.GzipPieces = make([][]byte, 0, 2*len(segs)+3)
		st.GzipPieces = append(st.GzipPieces, gzipHeader, gzOpen)
		crc := crcOpen.crc
		for i, sg := range segs {
			if i > 0 {
				st.GzipPieces = append(st.GzipPieces, gzComma)
				crc = crcComma.then(crc)
			}
			st.GzipPieces = append(st.GzipPieces, sg.gz)
			crc = sg.crc.then(crc)
		}
		crc = crcClose.then(crc)
		st.GzipPieces = append(st.GzipPieces, gzClose, gzipTrailer(crc, n))
		var gn int
		st.GzipPieces, gn = joinSmall(st.GzipPieces, joinGzipBelow)
		st.GzipContentLength = []string{strconv.Itoa(gn)}
	}
	return st
}

// joinSmall returns pieces, joined into one when their total is below
// below, and their total length.
func joinSmall(pieces [][]byte, below int) ([][]byte, int) {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	if len(pieces) > 1 && n < below {
		b := make([]byte, 0, n)
		for _, p := range pieces {
			b = append(b, p...)
		}
		return [][]byte{b}, n
	}
	return pieces, n
}

func (f *Format[E, C]) byID(a, b E) int { return cmp.Compare(f.ID(a), f.ID(b)) }

// Empty returns the state of an empty store named cursor.
func (f *Format[E, C]) Empty(cursor string) *State[E, C] { return f.newState(cursor, nil) }

// Full builds the state of every entry, items in ascending ID order
// (sorted here if a store broke that promise). The segments of prev (nil
// for none) whose entries are unchanged are kept, with their encodings: a
// store without changes is read whole for every list, and its unchanged
// segments are then not compressed again.
func (f *Format[E, C]) Full(cursor string, items []E, prev *State[E, C]) *State[E, C] {
	if !slices.IsSortedFunc(items, f.byID) {
		items = slices.Clone(items)
		slices.SortFunc(items, f.byID)
	}
	segs := make([]*segment[E], 0, (len(items)+segmentSize-1)/segmentSize)
	for len(items) > 0 {
		n := min(len(items), segmentSize)
		if k := len(segs); prev != nil && k < len(prev.segs) && slices.Equal(prev.segs[k].items, items[:n]) {
			segs = append(segs, prev.segs[k])
		} else {
			segs = append(segs, f.newSegment(items[:n:n]))
		}
		items = items[n:]
	}
	return f.newState(cursor, segs)
}

// appendChunks appends items as segments of segmentSize (the last one
// shorter). A segment's items are capped, so that nothing appends into
// its neighbour's.
func (f *Format[E, C]) appendChunks(segs []*segment[E], items []E) []*segment[E] {
	for len(items) > 0 {
		n := min(len(items), segmentSize)
		segs = append(segs, f.newSegment(items[:n:n]))
		items = items[n:]
	}
	return segs
}

// Apply returns the state named cursor that log leaves after st,
// re-encoding only the segments whose entries it changes. The log's later
// changes of an entry win.
func (st *State[E, C]) Apply(cursor string, log []C) *State[E, C] {
	f := st.f
	if len(log) == 0 {
		if cursor == st.Cursor {
			return st
		}
		renamed := *st // the same body under a new name: new entity tags
		renamed.Cursor = cursor
		renamed.ETag, renamed.GzipETag = etags(cursor, st.Pieces)
		return &renamed
	}
	// The last change of each entry, in ID order.
	changes := make([]change[E], len(log))
	for i, c := range log {
		e, del := f.Change(c)
		changes[i] = change[E]{id: f.ID(e), e: e, deleted: del}
	}
	slices.SortStableFunc(changes, func(a, b change[E]) int { return cmp.Compare(a.id, b.id) })
	last := changes[:0]
	for i, c := range changes {
		if i+1 < len(changes) && changes[i+1].id == c.id {
			continue
		}
		last = append(last, c)
	}
	changes = last

	segs := make([]*segment[E], 0, len(st.segs)+1)
	i := 0 // the next segment of st to place
	for len(changes) > 0 {
		// The segment that holds changes[0]'s entry: the last one
		// starting at or before it (the first one when none does).
		j := i
		for j+1 < len(st.segs) && f.ID(st.segs[j+1].items[0]) <= changes[0].id {
			j++
		}
		if j >= len(st.segs) { // no segment at all: the store was empty
			segs = f.appendSplit(segs, f.merge(nil, changes))
			changes = nil
			break
		}
		segs = append(segs, st.segs[i:j]...)
		// Its changes: those before the next segment's first entry.
		n := len(changes)
		if j+1 < len(st.segs) {
			next := f.ID(st.segs[j+1].items[0])
			n, _ = slices.BinarySearchFunc(changes, next, func(c change[E], id int64) int { return cmp.Compare(c.id, id) })
		}
		old := st.segs[j]
		merged := f.merge(old.items, changes[:n])
		if slices.Equal(merged, old.items) {
			segs = append(segs, old) // changes that change nothing
		} else {
			segs = f.appendSplit(segs, merged)
		}
		changes = changes[n:]
		i = j + 1
	}
	segs = append(segs, st.segs[i:]...) // i ≤ len(st.segs): j < len(st.segs) above
	return f.newState(cursor, segs)
}

// change is one change of a log, read through Format.Change once.
type change[E comparable] struct {
	id      int64
	e       E
	deleted bool
}

// merge returns items (ascending ID) with changes (ascending, one per
// entry) applied, in a new slice.
func (f *Format[E, C]) merge(items []E, changes []change[E]) []E {
	out := make([]E, 0, len(items)+len(changes))
	for len(items) > 0 || len(changes) > 0 {
		switch {
		case len(changes) == 0 || len(items) > 0 && f.ID(items[0]) < changes[0].id:
			out = append(out, items[0])
			items = items[1:]
		default:
			c := changes[0]
			if len(items) > 0 && f.ID(items[0]) == c.id {
				items = items[1:] // replaced or deleted
			}
			if !c.deleted {
				out = append(out, c.e)
			}
			changes = changes[1:]
		}
	}
	return out
}

// appendSplit appends items as one segment, or as several of segmentSize
// when they outgrew twice that; nothing when items is empty.
func (f *Format[E, C]) appendSplit(segs []*segment[E], items []E) []*segment[E] {
	if len(items) > 2*segmentSize {
		return f.appendChunks(segs, items)
	}
	if len(items) > 0 {
		segs = append(segs, f.newSegment(items))
	}
	return segs
}
