package inventory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// outageStore is a gateStore whose list reads and updates fail with err
// while it is set: at once, as a store that refuses connections does, or
// whatever the test sets (UnavailableBecause's fault, a 500).
type outageStore struct {
	*gateStore
	err atomic.Pointer[error]
}

func (s *outageStore) fail(err error) {
	if err == nil {
		s.err.Store(nil)
		return
	}
	s.err.Store(&err)
}

func (s *outageStore) failure() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *outageStore) ListChanges(ctx context.Context, since string) (Changes, error) {
	if err := s.failure(); err != nil {
		s.reads.Add(1)
		return Changes{}, err
	}
	return s.gateStore.ListChanges(ctx, since)
}

func (s *outageStore) List(ctx context.Context) ([]Item, error) {
	ch, err := s.ListChanges(ctx, "")
	return ch.Items, err
}

func (s *outageStore) SetQuantity(ctx context.Context, id int64, q int) (Item, error) {
	if err := s.failure(); err != nil {
		return Item{}, err
	}
	return s.gateStore.SetQuantity(ctx, id, q)
}

var errRefused = Unavailable(errors.New("dial tcp 10.0.0.7:6379: connect: connection refused"))

// staleRecorder is an Observer that keeps the requests it is told about.
type staleRecorder struct {
	mu   sync.Mutex
	reqs []RequestObservation
}

func (r *staleRecorder) ObserveRequest(_ context.Context, o RequestObservation) {
	r.mu.Lock()
	r.reqs = append(r.reqs, o)
	r.mu.Unlock()
}

func (r *staleRecorder) ObserveStore(context.Context, StoreObservation) {}

func (r *staleRecorder) last() RequestObservation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// staleLog is a log that tests read.
type staleLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *staleLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count returns how many lines hold s.
func (l *staleLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

func (l *staleLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

const staleBound = 30 * time.Second

// staleFixture is an API with WithStaleIfError(staleBound) over an
// outageStore with 40 pets (enough for a gzip list), on a fake clock,
// preloaded at the clock's start; its log and observer are the test's.
type staleFixture struct {
	api   *API
	store *outageStore
	clock *fakeClock
	log   *staleLog
	obs   *staleRecorder
}

func newStaleIfErrorAPI(t *testing.T, timeout time.Duration, opts ...Option) *staleFixture {
	t.Helper()
	items := map[int64]Item{}
	for id := int64(1); id <= 40; id++ {
		items[id] = Item{PetID: id, Quantity: 1, Status: StatusAvailable}
	}
	f := &staleFixture{store: &outageStore{gateStore: &gateStore{items: items}}, clock: &fakeClock{t: time.Unix(1000, 0)}, log: &staleLog{}, obs: &staleRecorder{}}
	opts = append([]Option{WithAPIKeys("k"), WithStoreTimeout(timeout), WithStaleIfError(staleBound),
		WithLogger(slog.New(slog.NewTextHandler(f.log, nil))), WithObserver(f.obs)}, opts...)
	a, err := New(f.store, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a.lists.now = f.clock.now
	if err := a.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.api = a
	return f
}

// answer is one list's answer as a client reads it.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) String() string {
	return fmt.Sprintf("%d %v %.60s", a.status, a.header, a.body)
}

// stale reports whether the answer is marked stale, with the Age given.
func (a answer) stale(age string) bool {
	return a.header.Get("Cache-Status") == "petinventory; fwd=stale; fwd-status=503" && a.header.Get("Age") == age
}

// fresh reports whether the answer carries neither Age nor Cache-Status.
func (a answer) fresh() bool {
	return a.header.Get("Age") == "" && a.header.Get("Cache-Status") == ""
}

// do sends a request as an adapter does, HEAD included, and reads its
// answer.
func (f *staleFixture) do(ctx context.Context, method string, route Route, hdr map[string]string) answer {
	req := &wire.Request{Method: method, Route: int(route), Authorization: "Bearer k", PetID: "1",
		CacheControl: hdr["Cache-Control"], IfNoneMatch: hdr["If-None-Match"], AcceptEncoding: hdr["Accept-Encoding"]}
	if route == RouteItem {
		req.BodyBytes = []byte(`{"quantity":7}`)
	}
	resp := f.api.serveObserved(ctx, req)
	h := http.Header{}
	resp.VisitHeaders(h.Add)
	var b strings.Builder
	if _, err := resp.WriteBody(&b); err != nil {
		panic(err)
	}
	resp.Release()
	return answer{resp.Status, h, b.String()}
}

func (f *staleFixture) list(hdr map[string]string) answer {
	return f.do(context.Background(), http.MethodGet, RouteList, hdr)
}

// Off by default: lists carry the Cache-Control of before, and a store
// outage is a 503 as before.
func TestStaleIfErrorOff(t *testing.T) {
	s := &outageStore{gateStore: &gateStore{items: map[int64]Item{1: {PetID: 1, Quantity: 1, Status: StatusAvailable}}}}
	a, err := New(s, WithAPIKeys("k"), WithStoreTimeout(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	f := &staleFixture{api: a, store: s}
	if got := f.list(nil); got.status != 200 || got.header.Get("Cache-Control") != "private, no-cache" || !got.fresh() {
		t.Fatalf("a list without the option: %v; want 200, Cache-Control: private, no-cache, no Age or Cache-Status", got)
	}
	s.fail(errRefused)
	if got := f.list(nil); got.status != 503 || !got.fresh() {
		t.Fatalf("a list during an outage without the option: %v; want 503", got)
	}
}

// Through an outage that fails at once (connections refused), a list is
// answered from the held state with Age, the stale mark and the state's
// own ETag, in every form (identity, gzip, 304, HEAD); every list answer,
// fresh or stale, declares the bound.
func TestStaleIfErrorServesHeldState(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second)
	fresh := f.list(nil)
	const cc = "private, no-cache, stale-if-error=30"
	if fresh.status != 200 || !fresh.fresh() || fresh.header.Get("Cache-Control") != cc {
		t.Fatalf("a fresh list: %v; want 200 with Cache-Control %q, no Age or Cache-Status", fresh, cc)
	}
	freshGzip := f.list(map[string]string{"Accept-Encoding": "gzip"})
	update(t, f.api, 42) // the store moves on; the outage hides it
	f.store.fail(errRefused)
	f.clock.advance(2500 * time.Millisecond)

	got := f.list(nil)
	if got.status != 200 || !got.stale("2") || got.body != fresh.body || got.header.Get("Etag") != fresh.header.Get("Etag") || got.header.Get("Cache-Control") != cc {
		t.Fatalf("a list 2.5 s after the last read, the store refusing: %v; want 200, the held state (%s), Age: 2, the stale mark, Cache-Control %q", got, fresh.header.Get("Etag"), cc)
	}
	gz := f.list(map[string]string{"Accept-Encoding": "gzip"})
	if gz.status != 200 || !gz.stale("2") || gz.header.Get("Content-Encoding") != "gzip" || gz.header.Get("Etag") != freshGzip.header.Get("Etag") || gz.body != freshGzip.body {
		t.Fatalf("a gzip list through the outage: %v; want the held gzip body with its tag %s, marked stale", gz, freshGzip.header.Get("Etag"))
	}
	nm := f.list(map[string]string{"If-None-Match": fresh.header.Get("Etag")})
	if nm.status != 304 || nm.body != "" || !nm.stale("2") || nm.header.Get("Etag") != fresh.header.Get("Etag") || nm.header.Get("Cache-Control") != cc {
		t.Fatalf("a conditional list naming the held state's tag: %v; want 304 with Age, the mark, the tag and Cache-Control", nm)
	}
	if other := f.list(map[string]string{"If-None-Match": `"0000"`}); other.status != 200 || other.body != fresh.body || !other.stale("2") {
		t.Fatalf("a conditional list naming another tag: %v; want the held state, 200, marked stale", other)
	}
	head := f.do(context.Background(), http.MethodHead, RouteList, nil)
	if head.status != 200 || head.body != "" || !head.stale("2") || head.header.Get("Content-Length") != fmt.Sprint(len(fresh.body)) {
		t.Fatalf("HEAD through the outage: %v; want the GET's status and headers (Content-Length %d, Age, the mark), no body", head, len(fresh.body))
	}
	if o := f.obs.last(); !o.Stale || o.Age != 2500*time.Millisecond || o.Status != 200 {
		t.Fatalf("observed %+v; want Stale with Age 2.5s", o)
	}
}

// The bound is kept to the nanosecond of the lister's clock: a state read
// exactly the bound ago is served (Age 30), one read later than that is
// not (503 with Retry-After, as without the option).
func TestStaleIfErrorBound(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second)
	f.store.fail(errRefused)
	f.clock.advance(staleBound)
	if got := f.list(nil); got.status != 200 || !got.stale("30") {
		t.Fatalf("a list the bound after the last read: %v; want 200 marked stale, Age: 30", got)
	}
	f.clock.advance(time.Nanosecond)
	got := f.list(nil)
	if got.status != 503 || got.header.Get("Retry-After") != "1" || !got.fresh() || got.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a list past the bound: %v; want 503 with Retry-After, as without the option", got)
	}
	if o := f.obs.last(); o.Stale || o.Status != 503 {
		t.Fatalf("observed %+v; want a 503, not stale", o)
	}
}

// A request that asks for a strict list, and every update, get 503 as
// without the option.
func TestStaleIfErrorStrictAndUpdates(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second)
	f.store.fail(errRefused)
	for _, cc := range []string{"no-cache", "max-age=0, No-Cache"} {
		if got := f.list(map[string]string{"Cache-Control": cc}); got.status != 503 || !got.fresh() {
			t.Fatalf("a list with Cache-Control: %s through the outage: %v; want 503", cc, got)
		}
	}
	got := f.do(context.Background(), http.MethodPatch, RouteItem, nil)
	if got.status != 503 || got.header.Get("Retry-After") != "1" || !got.fresh() || got.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("an update through the outage: %v; want 503 with Retry-After and no-store", got)
	}
	if got := f.list(nil); got.status != 200 || !got.stale("0") {
		t.Fatalf("a list through the outage: %v; want 200 marked stale", got)
	}
}

// A fault of the inventory itself (UnavailableBecause: never initialized,
// or wiped) is never answered from the held state, nor is any outage after
// it until a read succeeds; then lists are answered stale again.
func TestStaleIfErrorNeverAfterVanish(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second)
	fix := "the inventory store vanished under this process; restore it or initialize it again"
	gone := UnavailableBecause(fix, errors.New("marker missing"))
	for name, err := range map[string]error{"UnavailableBecause": gone, "wrapped by Unavailable": Unavailable(fmt.Errorf("pipeline: %w", gone))} {
		t.Run(name, func(t *testing.T) {
			f.store.fail(err)
			got := f.list(nil)
			if got.status != 503 || !got.fresh() || (name == "UnavailableBecause" && !strings.Contains(got.body, fix)) {
				t.Fatalf("a list of a vanished store: %v; want 503 naming the fault, never the held state", got)
			}
			f.store.fail(errRefused) // and then the store goes out of reach
			if got := f.list(nil); got.status != 503 || !got.fresh() {
				t.Fatalf("a list during an outage after the store vanished: %v; want 503, never the state held from before", got)
			}
			f.store.fail(nil)
			if got := f.list(nil); got.status != 200 || !got.fresh() {
				t.Fatalf("a list once the store answers: %v; want 200 fresh", got)
			}
			f.store.fail(errRefused)
			if got := f.list(nil); got.status != 200 || !got.stale("0") {
				t.Fatalf("a list during an outage after a read succeeded again: %v; want 200 marked stale", got)
			}
			f.store.fail(nil)
			f.list(nil)
		})
	}
}

// Only an outage is answered stale: an error the API answers 500 stays a
// 500, and a list whose client went away is not answered from the held
// state (nor logged as a stale list).
func TestStaleIfErrorOnlyOutages(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second)
	f.store.fail(errors.New("ERR unknown reply"))
	if got := f.list(nil); got.status != 500 || !got.fresh() {
		t.Fatalf("a list the store fails with an unknown error: %v; want 500", got)
	}
	f.store.fail(errRefused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := f.do(ctx, http.MethodGet, RouteList, nil); got.status != 503 || !got.fresh() {
		t.Fatalf("a list whose client went away: %v; want 503 (read by nobody), not the held state", got)
	}
	if n := f.log.count("serving lists from a state"); n != 0 {
		t.Fatalf("%d stale lines logged; want none:\n%s", n, f.log)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if got := f.do(ctx, http.MethodGet, RouteList, nil); got.status != 200 || !got.stale("0") {
		t.Fatalf("a list whose request deadline passed (a host's time-out, the client still there): %v; want 200 marked stale", got)
	}
}

// A store that stops answering: the first list's inline read times out
// under the store timeout and is answered stale; the next ones wait for
// the detached read the store timeout and are answered stale too; once
// the store answers, lists are fresh, and the log has one line for the
// outage and one for its end.
func TestStaleIfErrorStoreTimeout(t *testing.T) {
	f := newStaleIfErrorAPI(t, 20*time.Millisecond)
	held := f.list(nil)
	gate := make(chan struct{})
	f.store.setGate(gate) // the store stops answering
	update(t, f.api, 42)
	f.clock.advance(time.Second)
	for i := range 4 {
		if got := f.list(nil); got.status != 200 || !got.stale("1") || got.body != held.body {
			t.Fatalf("list %d while the store does not answer: %v; want the held state, marked stale, Age: 1", i, got)
		}
	}
	if !f.api.lists.slow.Load() {
		t.Fatal("the lister does not know its inline read timed out")
	}
	if n := f.log.count("serving lists from a state 1 s old: the store is unavailable: "); n != 1 {
		t.Fatalf("%d outage lines; want 1:\n%s", n, f.log)
	}
	close(gate)
	f.store.setGate(nil)
	waitFor(t, "the detached reads end", f.api.lists.idle)
	got := f.list(nil)
	if got.status != 200 || !got.fresh() || quantity(got.body) != "42" {
		t.Fatalf("a list once the store answers: %v; want 200 fresh with quantity 42", got)
	}
	if n := f.log.count("lists are answered fresh again"); n != 1 {
		t.Fatalf("%d lines for the end of the outage; want 1:\n%s", n, f.log)
	}
	if !strings.Contains(f.log.String(), "stale_lists=4") {
		t.Fatalf("the end line does not count the 4 stale lists:\n%s", f.log)
	}
}

// Outages are logged once each: a second outage after a successful read is
// a second pair of lines.
func TestStaleIfErrorLogsEachOutage(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second)
	for outage := 1; outage <= 2; outage++ {
		f.store.fail(errRefused)
		for range 5 {
			if got := f.list(nil); got.status != 200 || !got.stale("0") {
				t.Fatalf("outage %d: %v; want 200 stale", outage, got)
			}
		}
		f.store.fail(nil)
		if got := f.list(nil); !got.fresh() {
			t.Fatalf("outage %d over: %v; want fresh", outage, got)
		}
		if n, m := f.log.count("serving lists from a state 0 s old: the store is unavailable: dial tcp 10.0.0.7:6379: connect: connection refused"), f.log.count("lists are answered fresh again"); n != outage || m != outage {
			t.Fatalf("after outage %d: %d outage lines and %d end lines; want %d each:\n%s", outage, n, m, outage, f.log)
		}
	}
	if n := f.log.count("store unavailable"); n != 0 {
		t.Fatalf("%d store-unavailable warnings for lists answered stale; want none:\n%s", n, f.log)
	}
}

// With WithMaxStaleness(b): within b a list is answered from the held
// state unmarked, as that option says; past b, with the store out, it is
// answered stale, marked, up to the stale bound; past that, 503.
func TestStaleIfErrorWithMaxStaleness(t *testing.T) {
	f := newStaleIfErrorAPI(t, time.Second, WithMaxStaleness(bound))
	f.store.fail(errRefused)
	if got := f.list(nil); got.status != 200 || !got.fresh() || got.header.Get("Cache-Control") != "private, no-cache, stale-if-error=30" {
		t.Fatalf("a list within the staleness bound: %v; want 200 unmarked, with the stale-if-error directive", got)
	}
	f.clock.advance(bound + time.Millisecond)
	if got := f.list(nil); got.status != 200 || !got.stale("0") {
		t.Fatalf("a list past the staleness bound with the store out: %v; want 200 marked stale", got)
	}
	if got := f.list(map[string]string{"Cache-Control": "no-cache"}); got.status != 503 {
		t.Fatalf("a no-cache list: %v; want 503", got)
	}
	f.clock.advance(staleBound)
	if got := f.list(nil); got.status != 503 {
		t.Fatalf("a list past the stale bound: %v; want 503", got)
	}
	f.store.fail(nil)
	if got := f.list(nil); got.status != 200 || !got.fresh() {
		t.Fatalf("a list once the store answers: %v; want 200 fresh", got)
	}
}

// New refuses a bound it could not keep as declared.
func TestStaleIfErrorOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithStaleIfError(-time.Second), WithStoreTimeout(time.Second)}, "WithStaleIfError(-1s): must not be negative"},
		{[]Option{WithStaleIfError(1500 * time.Millisecond), WithStoreTimeout(time.Second)}, "WithStaleIfError(1.5s): must be a whole number of seconds"},
		{[]Option{WithStaleIfError(time.Minute)}, "WithStaleIfError(1m0s) needs WithStoreTimeout"},
		{[]Option{WithStaleIfError(time.Second), WithStoreTimeout(time.Second), WithMaxStaleness(time.Second)}, "must be longer than WithMaxStaleness(1s)"},
	} {
		_, err := New(&gateStore{}, append([]Option{WithAPIKeys("k")}, tc.opts...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v; want an error with %q", err, tc.want)
		}
	}
	if _, err := New(&gateStore{}, WithAPIKeys("k"), WithStaleIfError(0)); err != nil {
		t.Errorf("WithStaleIfError(0) (off): %v", err)
	}
}

func TestOutageAndVanished(t *testing.T) {
	gone := UnavailableBecause("wiped", errors.New("marker"))
	for _, tc := range []struct {
		err       error
		outage    bool
		cause     string
		isVanish  bool
		errString string
	}{
		{errRefused, true, "dial tcp 10.0.0.7:6379: connect: connection refused", false, ""},
		{ErrUnavailable, true, "the inventory store is unavailable; retry later", false, ""},
		{fmt.Errorf("list: %w", context.DeadlineExceeded), true, "list: context deadline exceeded", false, ""},
		{gone, false, "", true, ""},
		{Unavailable(fmt.Errorf("read: %w", gone)), false, "", true, ""},
		{errors.Join(errRefused, gone), false, "", true, ""},
		{ErrNotFound, false, "", false, ""},
		{errors.New("boom"), false, "", false, ""},
	} {
		cause, ok := outage(tc.err)
		if ok != tc.outage || cause != tc.cause || vanished(tc.err) != tc.isVanish {
			t.Errorf("%v: outage %q %v, vanished %v; want %q %v, %v", tc.err, cause, ok, vanished(tc.err), tc.cause, tc.outage, tc.isVanish)
		}
	}
}
