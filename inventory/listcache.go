package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/listbody"
)

// The list body is kept encoded and shared by package listbody; what is
// here is when the store is read for it. A ChangeLister store says what
// changed since the state the API holds; any other store is listed whole.
// The reading stays in this package because it is the API's behaviour, not
// the body's: a list must show every write answered before it began (or,
// under WithMaxStaleness, at least the bound before it), the read runs
// under the store timeout and is observed as a store call, and a store's
// panic is answered 500 as in serve.

// listState is one state of the store, encoded.
type listState = listbody.State[Item, Change]

// listFormat is how listbody reads the entries and changes of a store.
var listFormat = &listbody.Format[Item, Change]{
	ID:         func(it Item) int64 { return it.PetID },
	AppendJSON: func(b []byte, it Item) []byte { return it.appendJSON(b) },
	Change:     func(c Change) (Item, bool) { return c.Item, c.Deleted },
	GzipMin:    GzipMinBytes,
}

// lister answers lists from the last state read, sharing one store read
// among the lists that wait for it; a list joins only a read that starts
// after it, so that it shows every write answered before it began. A list
// that finds no read running reads inline under its own store timeout; a
// queued, first or post-timeout read (likely a full read) runs detached
// under readTimeoutFactor store timeouts, so that it completes and serves
// later lists even when the waiting ones give up.
//
// With a bound on staleness (WithMaxStaleness), a list is answered from
// the held state when the read that produced it was sent at most the bound
// ago; a list that finds the held state older than half the bound starts a
// read in the background, so that while lists keep coming the held state
// stays within the bound and the store sees at most about two reads per
// bound, whatever the list rate. No list, no read: the background read is
// started by lists only.
//
// With WithStaleIfError, a list whose read fails for an outage of the
// store is answered from the held state when the read that produced it
// was sent at most that bound ago (stale), unless a read met the fault of
// an inventory that vanished since the last one that succeeded (gone).
type lister struct {
	api          *API
	held         atomic.Pointer[heldState] // the last state read; nil before the first
	slow         atomic.Bool               // the last inline read timed out: read detached
	gone         atomic.Bool               // the last read failed with UnavailableBecause's fault: nothing held is served stale
	maxStale     time.Duration             // WithMaxStaleness; 0: every list reads
	staleIfError time.Duration             // WithStaleIfError; 0: no list is answered stale
	now          func() time.Time          // the local monotonic clock (time.Now); tests replace it
	outage       staleOutage               // the stale lists of the outage in progress, for the log

	mu      sync.Mutex
	running bool      // a read is in progress
	queued  *listRead // the read to start when it ends, if any
	tried   time.Time // when the last background read started
}

// heldState is a state read and when the read that produced it was sent:
// it shows every write answered before sent.
type heldState struct {
	st   *listState
	sent time.Time
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

// recent returns a state for a list: the held state when a bound is set,
// the request did not ask for no-cache and the read that produced it was
// sent at most the bound ago; otherwise the store's current state (get).
// A held state older than half the bound starts a background read.
func (l *lister) recent(ctx context.Context, noCache bool) (*listState, error) {
	if l.maxStale > 0 && !noCache {
		if h := l.held.Load(); h != nil {
			age := l.now().Sub(h.sent)
			if age <= l.maxStale {
				if age > l.maxStale/2 {
					l.refresh()
				}
				return h.st, nil
			}
		}
	}
	return l.get(ctx, true)
}

// stale returns the held state and its age for a list that could not be
// answered fresh because of err, when WithStaleIfError allows it: the
// request did not ask for no-cache nor went away, err is an outage of the
// store and not the fault of an inventory that vanished (nor did a read
// meet that fault since the last one that succeeded), and the read that
// produced the held state was sent at most the bound ago. The first stale
// list of an outage is logged.
func (l *lister) stale(ctx context.Context, err error, noCache bool) (*listState, time.Duration, bool) {
	if l.staleIfError == 0 || noCache || errors.Is(ctx.Err(), context.Canceled) || l.gone.Load() {
		return nil, 0, false
	}
	cause, ok := outage(err)
	h := l.held.Load()
	if !ok || h == nil {
		return nil, 0, false
	}
	age := l.now().Sub(h.sent)
	if age > l.staleIfError {
		return nil, 0, false
	}
	l.outage.begin(ctx, l.api.log, age, cause)
	return h.st, age, true
}

// staleOutage logs the stale lists of an outage: one line when the first
// is answered, one when a store read succeeds again, not one per list.
type staleOutage struct {
	on    atomic.Bool // a list was answered stale since the last successful read
	mu    sync.Mutex
	since time.Time // when the first stale list of the outage was answered
	lists int64     // how many were
}

// begin counts a stale list and logs it when it is the outage's first.
func (o *staleOutage) begin(ctx context.Context, log *slog.Logger, age time.Duration, cause string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lists++
	if o.on.Load() {
		return
	}
	o.on.Store(true)
	o.since, o.lists = time.Now(), 1
	secs := int64(age / time.Second)
	log.WarnContext(ctx, fmt.Sprintf("inventory: serving lists from a state %d s old: the store is unavailable: %s", secs, cause),
		"age_seconds", secs, "cause", cause)
}

// end logs that lists are answered fresh again, once per outage: a store
// read has succeeded.
func (o *staleOutage) end(ctx context.Context, log *slog.Logger) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.on.Load() {
		return
	}
	o.on.Store(false)
	lasted := time.Since(o.since).Round(time.Millisecond)
	log.InfoContext(ctx, fmt.Sprintf("inventory: lists are answered fresh again: the store answers; %d lists were answered stale over %v", o.lists, lasted),
		"stale_lists", o.lists, "stale_for", lasted.String())
}

// refresh starts a detached read unless a read is in progress (that one
// renews the held state already) or the last background read started at
// most half the bound ago: one that failed is tried again no sooner, so
// that a store failing fast sees no more reads than one that answers.
func (l *lister) refresh() {
	l.mu.Lock()
	now := l.now()
	if l.running || now.Sub(l.tried) <= l.maxStale/2 {
		l.mu.Unlock()
		return
	}
	l.running, l.tried = true, now
	// Not the list's context: no list waits for this read, so its
	// observation and span belong to no request.
	r := newListRead(context.Background())
	l.mu.Unlock()
	go l.runDetached(r)
}

// get returns the store's current state: a state it held at some instant
// after get was called. With bounded, it waits at most the store timeout.
func (l *lister) get(ctx context.Context, bounded bool) (*listState, error) {
	l.mu.Lock()
	var r *listRead
	start := false
	switch {
	case !l.running && bounded && l.held.Load() != nil && !l.slow.Load():
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
			a.logPanic(ctx, v, "route", RouteList)
			st, err = nil, errInternal
		}
	}()
	if a.obs != nil {
		defer a.observeStore(ctx, StoreOpList, time.Now(), &err)
	}
	var held *listState
	if h := l.held.Load(); h != nil {
		held = h.st
	}
	since := ""
	if held != nil {
		since = held.Cursor
	}
	sent := l.now() // before the request leaves: the state read shows every write answered before it
	ch, err := a.svc.listChanges(ctx, since)
	if err != nil {
		if vanished(err) {
			l.gone.Store(true)
		}
		return nil, err
	}
	switch {
	case ch.Full:
		st = listFormat.Full(ch.Cursor, ch.Items, held)
	case held == nil:
		st = listFormat.Empty("").Apply(ch.Cursor, ch.Log) // a log since nothing: the changes are everything
	default:
		st = held.Apply(ch.Cursor, ch.Log)
	}
	l.held.Store(&heldState{st: st, sent: sent})
	if l.gone.Load() {
		l.gone.Store(false)
	}
	if l.outage.on.Load() {
		l.outage.end(ctx, a.log)
	}
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
