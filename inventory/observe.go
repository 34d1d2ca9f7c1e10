package inventory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// Observer is told about every request the API answers and every store
// call it makes: what metrics and traces need, without the API depending on
// any metrics or tracing library. Set one with WithObserver; the module
// github.com/petinventory/petinventory/instrumentation/otel provides one
// for OpenTelemetry.
//
// (Why an option and not a Store wrapper: see the package doc.)
//
// The API calls the methods synchronously, after the work they describe,
// from the request's goroutine: they must be safe for concurrent use, and
// should be quick (record a number, end a span). A panic in one is
// recovered and logged; the client's answer is the same with or without
// an observer. With no observer, the API does not even read the clock.
type Observer interface {
	// ObserveRequest is called once per request, after its answer is
	// built and before it is written.
	ObserveRequest(ctx context.Context, r RequestObservation)
	// ObserveStore is called once per store call: one per update, and one
	// per read of the store for lists (concurrent lists share one read;
	// API.Preload makes one too). ctx is the request's, or for a shared
	// read the context of the list that started it.
	ObserveStore(ctx context.Context, s StoreObservation)
}

// RequestObservation describes one answered request. It holds nothing
// secret: no key, no header, no body.
type RequestObservation struct {
	Route    Route         // RouteList or RouteItem
	Method   string        // the request's method, as sent (it may be any token, on a 405); safe to keep
	Status   int           // the HTTP status answered
	Code     Code          // the error code answered, "" for a 200
	Start    time.Time     // when serving began
	Duration time.Duration // from Serve's start to the answer being ready (not written)
	// Stale is true for a list answered from a held state because the
	// store was unavailable (WithStaleIfError), 200 or 304; Age is then
	// how long before the answer the store read that produced that state
	// was sent (the Age header is its whole seconds).
	Stale bool
	Age   time.Duration
}

// StoreOp names a store call the API makes.
type StoreOp string

// The store calls of the API's two routes.
const (
	StoreOpList        StoreOp = "list"         // Store.List or ChangeLister.ListChanges
	StoreOpSetQuantity StoreOp = "set_quantity" // Store.SetQuantity
)

// Outcome classifies how a store call ended, as the API answers it.
type Outcome string

// The outcomes of a store call.
const (
	OutcomeOK          Outcome = "ok"
	OutcomeNotFound    Outcome = "not_found"   // answered 404
	OutcomeUnavailable Outcome = "unavailable" // answered 503: down, timed out, refusing work
	OutcomeInternal    Outcome = "internal"    // answered 500: a bug or an unknown failure
)

// StoreObservation describes one store call.
type StoreObservation struct {
	Op       StoreOp
	Outcome  Outcome
	Err      error // the store's error (nil when Outcome is ok), for traces and logs
	Start    time.Time
	Duration time.Duration
}

// WithObserver sets the Observer of every request and store call. Default
// none: nothing is measured and nothing is spent measuring.
func WithObserver(o Observer) Option {
	return func(c *config) { c.observer = o }
}

// outcomeOf classifies a store error as the API answers it.
func outcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	if errors.Is(err, ErrNotFound) {
		return OutcomeNotFound
	}
	if e, _ := asError(err); e.code == CodeUnavailable {
		return OutcomeUnavailable
	}
	return OutcomeInternal
}

func (a *API) observeRequest(ctx context.Context, req *wire.Request, resp *wire.Response, start time.Time) {
	defer a.recoverObserver(ctx, "ObserveRequest")
	a.obs.ObserveRequest(ctx, RequestObservation{
		Route:    Route(req.Route),
		Method:   stableMethod(req.Method),
		Status:   resp.Status,
		Code:     Code(resp.Code),
		Start:    start,
		Duration: time.Since(start),
		Stale:    resp.Stale,
		Age:      resp.StaleAge,
	})
}

// observeStore is deferred around a store call; *errp is its result. A
// panic of the store passes through (Serve answers it 500) after it is
// observed as internal.
func (a *API) observeStore(ctx context.Context, op StoreOp, start time.Time, errp *error) {
	o := StoreObservation{Op: op, Outcome: outcomeOf(*errp), Err: *errp, Start: start}
	v := recover()
	if v != nil {
		o.Outcome, o.Err = OutcomeInternal, fmt.Errorf("panic: %v", v)
	}
	o.Duration = time.Since(start)
	func() {
		defer a.recoverObserver(ctx, "ObserveStore")
		a.obs.ObserveStore(ctx, o)
	}()
	if v != nil {
		panic(v)
	}
}

// stableMethod returns m in memory of its own: an adapter's strings may be
// views of a buffer its framework reuses (fasthttp's), and an observer may
// keep the method (as a metric label, say). The standard methods cost
// nothing: they are constants.
func stableMethod(m string) string {
	for _, std := range [...]string{
		http.MethodGet, http.MethodPatch, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace,
	} {
		if m == std {
			return std
		}
	}
	return strings.Clone(m)
}

// recoverObserver keeps an observer's panic from reaching the request.
func (a *API) recoverObserver(ctx context.Context, method string) {
	if v := recover(); v != nil {
		a.log.ErrorContext(ctx, "inventory: the Observer panicked; the request was answered as usual", "method", method, "panic", fmt.Sprint(v))
	}
}
