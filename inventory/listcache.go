package inventory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The list body is kept encoded, in segments, and shared: every list in
// flight writes the same immutable pieces, so memory does not grow with
// the number of lists, and a change re-encodes only the segments it
// touches. A ChangeLister store says what changed since the state the
// API holds; any other store is listed whole and encoded every time.

// segmentSize is how many entries a segment holds when segments are built
// from a full list. A segment that inserts grow past twice that is split;
// one that deletes empty is dropped.
const segmentSize = 1024

// segment is a run of entries in ascending PetID order, never empty, and
// its encoding: each entry's JSON preceded by a comma, so that the body is
// "[" + segs[0].enc[1:] + segs[1].enc + … + "]" without copying anything.
// Beside it, gz is the raw DEFLATE compression of enc[1:] (the entries
// without the leading comma), sync-flushed, and crc its CRC-32, for the
// gzip body (listgzip.go). It is immutable once built.
type segment struct {
	items []Item
	enc   []byte
	gz    []byte
	crc   crcPart
}

func newSegment(items []Item) *segment {
	const perItem = 57 // ,{"petId":…,"quantity":…,"status":"available"} with typical numbers
	enc := make([]byte, 0, len(items)*perItem)
	for _, it := range items {
		enc = it.appendJSON(append(enc, ','))
	}
	return &segment{items: items, enc: enc, gz: deflateBytes(enc[1:], false), crc: newCRCPart(enc[1:])}
}

// listState is one state of the store, encoded. It is immutable once
// stored: a change builds a new state that shares the unchanged segments.
type listState struct {
	cursor        string // the store's name for this state; "" for a store without changes
	segs          []*segment
	pieces        [][]byte // the body: "[", the segments' encodings, "]"; one piece when small
	contentLength []string // its length, as the header value net/http takes
	etag          []string // the identity body's entity tag, as a header value

	// The gzip body, when the identity body is at least GzipMinBytes:
	// header, compressed pieces, trailer; one piece when small. nil below.
	gzPieces        [][]byte
	gzContentLength []string
	gzETag          []string
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

// newListState builds the body of segs, identity and gzip.
func newListState(cursor string, segs []*segment) *listState {
	st := &listState{cursor: cursor, segs: segs}
	if len(segs) == 0 {
		st.pieces = [][]byte{emptyList}
	} else {
		st.pieces = make([][]byte, 0, len(segs)+2)
		st.pieces = append(st.pieces, openBracket, segs[0].enc[1:])
		for _, sg := range segs[1:] {
			st.pieces = append(st.pieces, sg.enc)
		}
		st.pieces = append(st.pieces, closeBracket)
	}
	var n int
	st.pieces, n = joinSmall(st.pieces, joinBelow)
	st.contentLength = []string{strconv.Itoa(n)}
	st.etag, st.gzETag = listETags(cursor, st.pieces)
	if n >= GzipMinBytes {
		st.gzPieces = make([][]byte, 0, 2*len(segs)+3)
		st.gzPieces = append(st.gzPieces, gzipHeader, gzOpen)
		crc := crcOpen.crc
		for i, sg := range segs {
			if i > 0 {
				st.gzPieces = append(st.gzPieces, gzComma)
				crc = crcComma.then(crc)
			}
			st.gzPieces = append(st.gzPieces, sg.gz)
			crc = sg.crc.then(crc)
		}
		crc = crcClose.then(crc)
		st.gzPieces = append(st.gzPieces, gzClose, gzipTrailer(crc, n))
		var gn int
		st.gzPieces, gn = joinSmall(st.gzPieces, joinGzipBelow)
		st.gzContentLength = []string{strconv.Itoa(gn)}
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

// fullState builds the state of every entry, items in ascending PetID
// order (sorted here if a store broke that promise). The segments of prev
// whose entries are unchanged are kept, with their encodings: a store
// without changes is read whole for every list, and its unchanged
// segments are then not compressed again.
func fullState(cursor string, items []Item, prev *listState) *listState {
	if !slices.IsSortedFunc(items, byPetID) {
		items = slices.Clone(items)
		slices.SortFunc(items, byPetID)
	}
	segs := make([]*segment, 0, (len(items)+segmentSize-1)/segmentSize)
	for len(items) > 0 {
		n := min(len(items), segmentSize)
		if k := len(segs); prev != nil && k < len(prev.segs) && slices.Equal(prev.segs[k].items, items[:n]) {
			segs = append(segs, prev.segs[k])
		} else {
			segs = append(segs, newSegment(items[:n:n]))
		}
		items = items[n:]
	}
	return newListState(cursor, segs)
}

// appendChunks appends items as segments of segmentSize (the last one
// shorter). A segment's items are capped, so that nothing appends into
// its neighbour's.
func appendChunks(segs []*segment, items []Item) []*segment {
	for len(items) > 0 {
		n := min(len(items), segmentSize)
		segs = append(segs, newSegment(items[:n:n]))
		items = items[n:]
	}
	return segs
}

func byPetID(a, b Item) int { return cmp.Compare(a.PetID, b.PetID) }

// apply returns the state after log, re-encoding only the segments whose
// entries it changes. The log's later changes of a pet win.
func (st *listState) apply(cursor string, log []Change) *listState {
	if len(log) == 0 {
		if cursor == st.cursor {
			return st
		}
		renamed := *st // the same body under a new name: new entity tags
		renamed.cursor = cursor
		renamed.etag, renamed.gzETag = listETags(cursor, st.pieces)
		return &renamed
	}
	// The last change of each pet, in PetID order.
	changes := slices.Clone(log)
	slices.SortStableFunc(changes, func(a, b Change) int { return cmp.Compare(a.PetID, b.PetID) })
	last := changes[:0]
	for i, c := range changes {
		if i+1 < len(changes) && changes[i+1].PetID == c.PetID {
			continue
		}
		last = append(last, c)
	}
	changes = last

	segs := make([]*segment, 0, len(st.segs)+1)
	i := 0 // the next segment of st to place
	for len(changes) > 0 {
		// The segment that holds changes[0]'s pet: the last one starting
		// at or before it (the first one when none does).
		j := i
		for j+1 < len(st.segs) && st.segs[j+1].items[0].PetID <= changes[0].PetID {
			j++
		}
		if j >= len(st.segs) { // no segment at all: the store was empty
			segs = appendSplit(segs, mergeChanges(nil, changes))
			changes = nil
			break
		}
		segs = append(segs, st.segs[i:j]...)
		// Its changes: those before the next segment's first pet.
		n := len(changes)
		if j+1 < len(st.segs) {
			next := st.segs[j+1].items[0].PetID
			n, _ = slices.BinarySearchFunc(changes, next, func(c Change, id int64) int { return cmp.Compare(c.PetID, id) })
		}
		old := st.segs[j]
		merged := mergeChanges(old.items, changes[:n])
		if slices.Equal(merged, old.items) {
			segs = append(segs, old) // changes that change nothing
		} else {
			segs = appendSplit(segs, merged)
		}
		changes = changes[n:]
		i = j + 1
	}
	segs = append(segs, st.segs[i:]...) // i ≤ len(st.segs): j < len(st.segs) above
	return newListState(cursor, segs)
}

// mergeChanges returns items (ascending PetID) with changes (ascending,
// one per pet) applied, in a new slice.
func mergeChanges(items []Item, changes []Change) []Item {
	out := make([]Item, 0, len(items)+len(changes))
	for len(items) > 0 || len(changes) > 0 {
		switch {
		case len(changes) == 0 || len(items) > 0 && items[0].PetID < changes[0].PetID:
			out = append(out, items[0])
			items = items[1:]
		default:
			c := changes[0]
			if len(items) > 0 && items[0].PetID == c.PetID {
				items = items[1:] // replaced or deleted
			}
			if !c.Deleted {
				out = append(out, c.Item)
			}
			changes = changes[1:]
		}
	}
	return out
}

// appendSplit appends items as one segment, or as several of segmentSize
// when they outgrew twice that; nothing when items is empty.
func appendSplit(segs []*segment, items []Item) []*segment {
	if len(items) > 2*segmentSize {
		return appendChunks(segs, items)
	}
	if len(items) > 0 {
		segs = append(segs, newSegment(items))
	}
	return segs
}

// lister answers lists from the last state read, sharing one store read
// among the lists that wait for it; a list joins only a read that starts
// after it, so that it shows every write answered before it began. A list
// that finds no read running reads inline under its own store timeout; a
// queued, first or post-timeout read (likely a full read) runs detached
// under readTimeoutFactor store timeouts, so that it completes and serves
// later lists even when the waiting ones give up.
type lister struct {
	api   *API
	state atomic.Pointer[listState] // the last state read; nil before the first
	slow  atomic.Bool               // the last inline read timed out: read detached

	mu      sync.Mutex
	running bool      // a read is in progress
	queued  *listRead // the read to start when it ends, if any
}

// listRead is one detached read of the store, shared by the lists waiting
// for it.
type listRead struct {
	ctx     context.Context // the first waiter's, without its cancellation
	done    chan struct{}   // closed when state and err are set
	waiters int             // lists waiting for it, under lister.mu (tests read it)
	state   *listState
	err     error
}

// get returns the store's current state: a state it held at some instant
// after get was called. With bounded, it waits at most the store timeout.
func (l *lister) get(ctx context.Context, bounded bool) (*listState, error) {
	l.mu.Lock()
	var r *listRead
	start := false
	switch {
	case !l.running && bounded && l.state.Load() != nil && !l.slow.Load():
		l.running = true
		l.mu.Unlock()
		st, err := l.readInline(ctx)
		l.finish()
		return st, err
	case !l.running:
		l.running = true
		r = newListRead(ctx)
		start = true
	case l.queued == nil:
		r = newListRead(ctx)
		l.queued = r
	default:
		r = l.queued
	}
	r.waiters++
	l.mu.Unlock()
	if start {
		go l.runDetached(r)
	}
	return l.wait(ctx, r, bounded)
}

// wait waits for r; with bounded, at most the store timeout.
func (l *lister) wait(ctx context.Context, r *listRead, bounded bool) (*listState, error) {
	wait, cancel := ctx, context.CancelFunc(func() {})
	if t := l.api.storeTimeout; t > 0 && bounded {
		wait, cancel = context.WithTimeout(ctx, t)
	}
	defer cancel()
	select {
	case <-r.done:
		return r.state, r.err
	case <-wait.Done():
		return nil, Unavailable(fmt.Errorf("the list did not complete within the store timeout: %w", wait.Err()))
	}
}

func newListRead(ctx context.Context) *listRead {
	return &listRead{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
}

// finish ends the running read: it starts the queued one, if any.
func (l *lister) finish() {
	l.mu.Lock()
	r := l.queued
	l.queued = nil
	l.running = r != nil
	l.mu.Unlock()
	if r != nil {
		go l.runDetached(r)
	}
}

// readInline is the read of a list that found none running, under its
// own context and store timeout.
func (l *lister) readInline(ctx context.Context) (*listState, error) {
	ctx, cancel := l.api.storeContext(ctx)
	defer cancel()
	st, err := l.read(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		l.slow.Store(true)
	}
	return st, err
}

// runDetached performs r under readTimeoutFactor store timeouts, then
// starts the read queued meanwhile, if any.
func (l *lister) runDetached(r *listRead) {
	ctx := r.ctx
	if t := l.api.storeTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readTimeoutFactor*t)
		defer cancel()
	}
	r.state, r.err = l.read(ctx)
	if r.err == nil {
		l.slow.Store(false)
	}
	close(r.done)
	l.finish()
}

// readTimeoutFactor bounds a detached read of the store at that many store
// timeouts: a full read of a large inventory may take longer than one
// request may wait, and the lists after it then use it.
const readTimeoutFactor = 10

// read asks the store for what changed since the held state, and stores
// and returns the state after it. A panic of the store is answered 500, as
// in serve, instead of ending the process from a detached read.
func (l *lister) read(ctx context.Context) (st *listState, err error) {
	a := l.api
	defer func() {
		if v := recover(); v != nil {
			a.log.ErrorContext(ctx, "inventory: panic while serving a request",
				"route", RouteList, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			st, err = nil, errInternal
		}
	}()
	if a.obs != nil {
		defer a.observeStore(ctx, StoreOpList, time.Now(), &err)
	}
	held := l.state.Load()
	since := ""
	if held != nil {
		since = held.cursor
	}
	ch, err := a.svc.listChanges(ctx, since)
	if err != nil {
		return nil, err
	}
	switch {
	case ch.Full:
		st = fullState(ch.Cursor, ch.Items, held)
	case held == nil:
		st = newListState("", nil).apply(ch.Cursor, ch.Log) // a log since nothing: the changes are everything
	default:
		st = held.apply(ch.Cursor, ch.Log)
	}
	l.state.Store(st)
	return st, nil
}

// Preload reads the store's inventory into the API's list cache, as a list
// does, and waits for it until ctx is done, however long the store takes.
// Call it before reporting ready: the first list after a start then does
// not wait for the full read of a large inventory, which can take longer
// than one list may (WithStoreTimeout; the read itself runs under ten
// times that). Later lists ask the store only for what changed.
func (a *API) Preload(ctx context.Context) error {
	_, err := a.lists.get(ctx, false)
	return err
}
