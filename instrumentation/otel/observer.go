package inventoryotel

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/petinventory/petinventory/inventory"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// The attributes this package adds to the HTTP semantic conventions' ones.
const (
	// ErrorCodeKey is the error code of an answer (docs/CONTRACT.md), on
	// the request duration and on the server span; absent for a 200.
	ErrorCodeKey = attribute.Key("inventory.error_code")
	// StoreOperationKey names a store call: "list" or "set_quantity".
	StoreOperationKey = attribute.Key("inventory.store.operation")
	// StoreOutcomeKey is how a store call ended: "ok", "not_found",
	// "unavailable" or "internal".
	StoreOutcomeKey = attribute.Key("inventory.store.outcome")
	// ListStaleKey is true on the server span of a list answered from
	// the last state the store confirmed because the store was
	// unavailable (inventory.WithStaleIfError); absent otherwise.
	ListStaleKey = attribute.Key("inventory.list.stale")
	// ListAgeKey is the age, in seconds, of the state a stale list
	// showed (its Age header, with the fraction), on the same span.
	ListAgeKey = attribute.Key("inventory.list.age")
)

// The metrics' names.
const (
	RequestDurationName        = "http.server.request.duration"
	StoreOperationDurationName = "inventory.store.operation.duration"
	// ListsStaleName counts the lists answered stale (200 and 304).
	ListsStaleName = "inventory.lists.stale"
	// ListStaleAgeName is the age of the state the last stale list showed.
	ListStaleAgeName = "inventory.list.stale.age"
)

// durationBuckets are the semantic conventions' advised boundaries for
// http.server.request.duration, in seconds; the store histogram uses them
// too, so that both read the same way.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Observer is an inventory.Observer that records metrics and spans with
// OpenTelemetry. Build it with NewObserver; it is safe for concurrent use.
type Observer struct {
	tracer   trace.Tracer
	reqDur   metric.Float64Histogram
	storeDur metric.Float64Histogram
	stale    metric.Int64Counter
	staleAge metric.Float64Gauge
	routes   map[inventory.Route]string

	// The attribute sets of the metrics, built once per distinct
	// combination and reused, so that recording allocates nothing. Every
	// attribute has few values (methods are folded by Method), so these
	// stay small.
	reqOpts   sync.Map // reqKey -> []metric.RecordOption
	storeOpts sync.Map // storeKey -> []metric.RecordOption
}

var _ inventory.Observer = (*Observer)(nil)

type reqKey struct {
	route  inventory.Route
	method string
	status int
	code   inventory.Code
}

type storeKey struct {
	op      inventory.StoreOp
	outcome inventory.Outcome
}

// NewObserver returns an Observer recording with the providers of opts
// (by default the global ones).
func NewObserver(opts ...Option) (*Observer, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if c.routePrefix != "" && (!strings.HasPrefix(c.routePrefix, "/") || strings.HasSuffix(c.routePrefix, "/")) {
		return nil, fmt.Errorf("inventoryotel: route prefix %q: want \"\" or a path such as /v1 (starting with /, not ending with /)", c.routePrefix)
	}
	meter := c.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	reqDur, err := meter.Float64Histogram(RequestDurationName,
		metric.WithDescription("Duration of HTTP server requests answered by the inventory API."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, fmt.Errorf("inventoryotel: %s: %w", RequestDurationName, err)
	}
	storeDur, err := meter.Float64Histogram(StoreOperationDurationName,
		metric.WithDescription("Duration of the inventory API's calls to its store."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, fmt.Errorf("inventoryotel: %s: %w", StoreOperationDurationName, err)
	}
	stale, err := meter.Int64Counter(ListsStaleName,
		metric.WithDescription("Lists answered from the last state the store confirmed because the store was unavailable."),
		metric.WithUnit("{list}"))
	if err != nil {
		return nil, fmt.Errorf("inventoryotel: %s: %w", ListsStaleName, err)
	}
	staleAge, err := meter.Float64Gauge(ListStaleAgeName,
		metric.WithDescription("Age of the state the last stale list showed."),
		metric.WithUnit("s"))
	if err != nil {
		return nil, fmt.Errorf("inventoryotel: %s: %w", ListStaleAgeName, err)
	}
	return &Observer{
		tracer:   c.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version())),
		reqDur:   reqDur,
		storeDur: storeDur,
		stale:    stale,
		staleAge: staleAge,
		routes: map[inventory.Route]string{
			inventory.RouteList: c.routePrefix + "/inventory",
			inventory.RouteItem: c.routePrefix + "/inventory/{petId}",
		},
	}, nil
}

// knownMethods are the methods of the HTTP semantic conventions'
// http.request.method list; anything else is "_OTHER".
var knownMethods = map[string]string{
	"CONNECT": "CONNECT", "DELETE": "DELETE", "GET": "GET", "HEAD": "HEAD", "OPTIONS": "OPTIONS",
	"PATCH": "PATCH", "POST": "POST", "PUT": "PUT", "TRACE": "TRACE", "QUERY": "QUERY",
}

// Method returns m if it is one of the HTTP methods the semantic
// conventions list (case-sensitive, as methods are), else "_OTHER", as
// they ask for http.request.method. A 405 may carry any method token: a
// metric labelled with it as sent would grow with every new one.
//
// The result is always one of those constant strings, never m itself: a
// framework's method string may be a view of a buffer it reuses for the
// next request (Fiber's is), and a metric label or a cache key must not
// change under its feet.
func Method(m string) string {
	if k, ok := knownMethods[m]; ok {
		return k
	}
	return other
}

var other = semconv.HTTPRequestMethodOther.Value.AsString()

// ObserveRequest records the request's duration and marks the request's
// span with its error code; a list answered stale is counted, its age
// recorded, and its span marked with both.
func (o *Observer) ObserveRequest(ctx context.Context, r inventory.RequestObservation) {
	if r.Stale {
		o.stale.Add(ctx, 1)
		o.staleAge.Record(ctx, r.Age.Seconds())
	}
	if o.reqDur.Enabled(ctx) { // false on a no-op MeterProvider: skip the attributes
		k := reqKey{route: r.Route, method: Method(r.Method), status: r.Status, code: r.Code}
		opts, ok := o.reqOpts.Load(k)
		if !ok {
			attrs := []attribute.KeyValue{
				semconv.HTTPRequestMethodKey.String(k.method),
				semconv.HTTPResponseStatusCode(k.status),
				semconv.HTTPRoute(o.route(k.route)),
			}
			if k.code != "" {
				attrs = append(attrs, ErrorCodeKey.String(string(k.code)))
			}
			opts, _ = o.reqOpts.LoadOrStore(k, []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))})
		}
		o.reqDur.Record(ctx, r.Duration.Seconds(), opts.([]metric.RecordOption)...)
	}

	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if r.Code != "" {
		span.SetAttributes(ErrorCodeKey.String(string(r.Code)))
	}
	if r.Stale {
		span.SetAttributes(ListStaleKey.Bool(true), ListAgeKey.Float64(r.Age.Seconds()))
	}
	if r.Status >= 500 {
		// The server instrumentation sets this too, from the status; a
		// host without one still sees the failure.
		span.SetStatus(codes.Error, string(r.Code))
	}
}

func (o *Observer) route(r inventory.Route) string {
	if s, ok := o.routes[r]; ok {
		return s
	}
	return r.String()
}

// ObserveStore records the store call's duration and, under a recording
// span, a child span covering the call.
func (o *Observer) ObserveStore(ctx context.Context, s inventory.StoreObservation) {
	if o.storeDur.Enabled(ctx) {
		k := storeKey{op: s.Op, outcome: s.Outcome}
		opts, ok := o.storeOpts.Load(k)
		if !ok {
			opts, _ = o.storeOpts.LoadOrStore(k, []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(
				StoreOperationKey.String(string(k.op)),
				StoreOutcomeKey.String(string(k.outcome)),
			))})
		}
		o.storeDur.Record(ctx, s.Duration.Seconds(), opts.([]metric.RecordOption)...)
	}

	if !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	_, span := o.tracer.Start(ctx, "inventory.store."+string(s.Op),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(s.Start),
		trace.WithAttributes(StoreOperationKey.String(string(s.Op)), StoreOutcomeKey.String(string(s.Outcome))))
	if s.Outcome == inventory.OutcomeUnavailable || s.Outcome == inventory.OutcomeInternal {
		if s.Err != nil {
			span.RecordError(s.Err, trace.WithTimestamp(s.Start.Add(s.Duration)))
		}
		span.SetStatus(codes.Error, string(s.Outcome))
	}
	span.End(trace.WithTimestamp(s.Start.Add(s.Duration)))
}
