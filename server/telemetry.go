package server

// Telemetry of the server: Prometheus metrics on GET /metrics, and
// OpenTelemetry traces exported over OTLP when Config.OTLPEndpoint or
// Config.OTLPTracesEndpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. docs/OBSERVABILITY.md
// lists the metrics and shows how to use them.
//
// The metrics use prometheus/client_golang directly rather than the
// OpenTelemetry Prometheus exporter: the exporter derives Prometheus names
// from the OpenTelemetry ones (http_server_request_duration_seconds with
// labels http_request_method, http_route, …, plus otel_scope_* labels on
// every series), while operators asked for inventory_http_requests_total
// {route, method, status}; client_golang also brings the Go runtime and
// process collectors, and reading redisstore.Stats and go-redis's pool
// statistics at scrape time is a plain Collector.
//
// Traces go through inventoryotel (store-call spans, error codes on the
// server span), the framework's own instrumentation (otelgin, otelfiber)
// for the server span, and redisotel for one span per Redis command. With
// tracing off none of them is installed: no middleware, no Redis hook, and
// the Observer is the Prometheus one alone.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/contrib/otelfiber/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	inventoryotel "github.com/petinventory/petinventory/instrumentation/otel"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// serviceName is the traces' service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const serviceName = "petinventory"

// telemetry is what run mounts: the Observer for inventory.New, and the
// /metrics route and server-span middleware for the framework.
type telemetry struct {
	registry *prometheus.Registry
	metrics  http.Handler
	observer inventory.Observer
	// tracer is nil when tracing is off.
	tracer      *sdktrace.TracerProvider
	propagators propagation.TextMapPropagator
}

// newTelemetry builds the server's telemetry, with traces exported over
// OTLP when cfg names an endpoint.
func newTelemetry(ctx context.Context, cfg Config, client redis.UniversalClient, store *redisstore.Store, log *slog.Logger) (*telemetry, error) {
	tp, err := otlpTracerProvider(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	t, err := newTelemetryWith(client, store, tp)
	if err != nil && tp != nil {
		_ = tp.Shutdown(ctx)
	}
	return t, err
}

// otlpTracerProvider returns a TracerProvider exporting over OTLP/HTTP, or
// nil when no OTLP endpoint is set: then nothing is traced at all.
// otlptracehttp reads the headers, TLS and timeout settings from the
// standard OTEL_EXPORTER_OTLP_* variables itself; the endpoint is cfg's,
// resolved as those variables are (the base URL gets /v1/traces).
func otlpTracerProvider(ctx context.Context, cfg Config, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	endpoint := cfg.OTLPTracesEndpoint
	if endpoint == "" && cfg.OTLPEndpoint != "" {
		endpoint = strings.TrimSuffix(cfg.OTLPEndpoint, "/") + "/v1/traces"
	}
	if endpoint == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter for %s: %w", endpointForLog(endpoint), err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(serviceName)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	// The SDK reports failed exports through the global error handler,
	// by default the standard logger: send them to the server's log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("OpenTelemetry", "error", err)
	}))
	log.Info("tracing on: exporting spans over OTLP", "endpoint", endpointForLog(endpoint))
	return newTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// endpointForLog is the endpoint without user info or query, which may
// hold credentials.
func endpointForLog(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "(unparsable endpoint)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// newTracerProvider is the SDK TracerProvider of the server, with the
// redacting processor first: the framework instrumentations record a few
// request attributes the server does not control (see redactSecrets).
func newTracerProvider(opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(redactSecrets{})}, opts...)...)
}

// newTelemetryWith builds the telemetry on the given TracerProvider (nil:
// tracing off).
func newTelemetryWith(client redis.UniversalClient, store *redisstore.Store, tp *sdktrace.TracerProvider) (*telemetry, error) {
	reg := prometheus.NewRegistry()
	prom := newPromObserver()
	for _, c := range []prometheus.Collector{
		buildInfoGauge(BuildInfo()),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prom.requests, prom.requestDuration, prom.storeDuration, prom.staleLists, prom.staleAge,
		redisCollector{store: store, client: client},
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the metrics: %w", err)
		}
	}
	t := &telemetry{
		registry: reg,
		metrics:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
		observer: prom,
	}
	if tp == nil {
		return t, nil
	}
	// The metrics go to Prometheus: the OpenTelemetry ones would be the
	// same numbers twice.
	obs, err := inventoryotel.NewObserver(inventoryotel.WithTracerProvider(tp),
		inventoryotel.WithMeterProvider(metricnoop.NewMeterProvider()))
	if err != nil {
		return nil, err
	}
	if err := redisotel.InstrumentTracing(client, redisotel.WithTracerProvider(tp)); err != nil {
		return nil, fmt.Errorf("tracing Redis commands: %w", err)
	}
	t.tracer = tp
	t.observer = observers{prom, obs}
	t.propagators = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	return t, nil
}

// shutdown flushes the spans not yet exported.
func (t *telemetry) shutdown(ctx context.Context) error {
	if t.tracer == nil {
		return nil
	}
	return t.tracer.Shutdown(ctx)
}

// traced reports whether a request path gets a server span: the API's
// routes only, not the probes and scrapes an orchestrator sends every
// few seconds.
func traced(path string) bool { return strings.HasPrefix(path, "/v1/") }

// mountGin adds the server-span middleware (tracing on) and, withMetrics,
// GET /metrics; call it before the routes are added, so that the
// middleware runs for them.
func (t *telemetry) mountGin(engine *gin.Engine, withMetrics bool) {
	if t.tracer != nil {
		engine.Use(otelgin.Middleware(serviceName,
			otelgin.WithTracerProvider(t.tracer),
			otelgin.WithPropagators(t.propagators),
			otelgin.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelgin.WithFilter(func(r *http.Request) bool { return traced(r.URL.Path) })))
	}
	if withMetrics {
		engine.GET("/metrics", gin.WrapH(t.metrics))
	}
}

// mountFiber is mountGin for Fiber.
func (t *telemetry) mountFiber(app *fiber.App, withMetrics bool) {
	if t.tracer != nil {
		app.Use(otelfiber.Middleware(
			otelfiber.WithTracerProvider(t.tracer),
			otelfiber.WithPropagators(t.propagators),
			otelfiber.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelfiber.WithNext(func(c *fiber.Ctx) bool { return !traced(c.Path()) })))
		app.Use(dropUnreadBody)
	}
	if withMetrics {
		app.Get("/metrics", adaptor.HTTPHandler(t.metrics))
	}
}

// metricsMux serves GET /metrics alone, for the metrics' own address
// (Config.MetricsAddr).
func (t *telemetry) metricsMux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", t.metrics)
	return mux
}

// dropUnreadBody runs inside otelfiber. After the handlers, otelfiber
// measures the request size with Request.Body(), which on a streamed body
// (newFiberApp sets StreamRequestBody) reads all of what the client
// is still sending into memory, however large: the very thing the
// inventory adapter's bounded drain avoids. Closing the stream first makes
// that a no-op; the adapter has already drained what it will, and asked
// for the connection to close when some is left.
func dropUnreadBody(c *fiber.Ctx) error {
	err := c.Next()
	if c.Context().RequestBodyStream() != nil {
		c.Request().ResetBody()
	}
	return err
}

// buildInfoGauge is inventory_build_info{version, revision, goversion} 1,
// the Prometheus convention for what a process is: a query joins it on
// instance, and a rollout shows as the labels changing.
func buildInfoGauge(b Build) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "inventory_build_info",
		Help: "The build of the inventory server: its module version, VCS revision and Go version (the value is always 1).",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(b.Version, b.Revision, b.GoVersion).Set(1)
	return g
}

// observers calls each of its Observers in turn.
type observers []inventory.Observer

func (os observers) ObserveRequest(ctx context.Context, r inventory.RequestObservation) {
	for _, o := range os {
		o.ObserveRequest(ctx, r)
	}
}

func (os observers) ObserveStore(ctx context.Context, s inventory.StoreObservation) {
	for _, o := range os {
		o.ObserveStore(ctx, s)
	}
}

// promObserver records the API's requests and store calls in Prometheus
// metrics. Every label has few values: route is list or item, method is
// folded by inventoryotel.Method (a 405 may carry any token), status, code
// and outcome come from short fixed lists. The code label, beyond the
// route, method and status asked for, tells the four kinds of 400 apart
// and gives the error rate by code.
type promObserver struct {
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	storeDuration   *prometheus.HistogramVec
	// staleLists and staleAge count the lists answered stale through a
	// store outage (-stale-if-error) and give the age of the last one.
	staleLists prometheus.Counter
	staleAge   prometheus.Gauge
	// series holds each request label set's counter and histogram once
	// looked up: WithLabelValues hashes the labels and takes a lock on
	// every call, which on a list answered from memory was most of the
	// observer's cost. The keys are few (see above), so it stays small.
	series sync.Map // requestLabels -> requestSeries
}

// requestLabels are a request's labels, the method already folded.
type requestLabels struct {
	route  inventory.Route
	method string
	status int
	code   inventory.Code
}

// requestSeries are the metrics one requestLabels records into.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

func newPromObserver() *promObserver {
	return &promObserver{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "inventory_http_requests_total",
			Help: "Requests answered by the inventory API, by route (list, item), method, HTTP status and error code (empty for a 200).",
		}, []string{"route", "method", "status", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "inventory_http_request_duration_seconds",
			Help:    "Time the inventory API took to build each answer, by route and method.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		storeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "inventory_store_operation_duration_seconds",
			Help:    "Duration of the inventory API's store calls, by operation (list, set_quantity) and outcome (ok, not_found, unavailable, internal).",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		}, []string{"operation", "outcome"}),
		staleLists: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "inventory_lists_stale_total",
			Help: "Lists (200 and 304) answered from the last state the store confirmed because the store was unavailable (-stale-if-error), marked with Age and Cache-Status: fwd=stale.",
		}),
		staleAge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "inventory_lists_stale_age_seconds",
			Help: "Age of the state the last stale list showed: seconds between the store read that produced it and the answer (its Age header, with the fraction); 0 before any.",
		}),
	}
}

func (p *promObserver) ObserveRequest(_ context.Context, r inventory.RequestObservation) {
	k := requestLabels{route: r.Route, method: inventoryotel.Method(r.Method), status: r.Status, code: r.Code}
	s, ok := p.series.Load(k)
	if !ok {
		route := k.route.String()
		s, _ = p.series.LoadOrStore(k, requestSeries{
			count:    p.requests.WithLabelValues(route, k.method, strconv.Itoa(k.status), string(k.code)),
			duration: p.requestDuration.WithLabelValues(route, k.method),
		})
	}
	series := s.(requestSeries)
	series.count.Inc()
	series.duration.Observe(r.Duration.Seconds())
	if r.Stale {
		p.staleLists.Inc()
		p.staleAge.Set(r.Age.Seconds())
	}
}

func (p *promObserver) ObserveStore(_ context.Context, s inventory.StoreObservation) {
	p.storeDuration.WithLabelValues(string(s.Op), string(s.Outcome)).Observe(s.Duration.Seconds())
}

// redisCollector reads the store's transaction counters and go-redis's
// connection pool statistics at each scrape.
type redisCollector struct {
	store  *redisstore.Store
	client redis.UniversalClient
}

var (
	descWatchAborts = prometheus.NewDesc("inventory_store_watch_aborts_total",
		"Updates whose Redis transaction was aborted because the pet's entry changed between WATCH and EXEC; each was retried, or counted in inventory_store_retries_exhausted_total.", nil, nil)
	descRetriesExhausted = prometheus.NewDesc("inventory_store_retries_exhausted_total",
		"Updates that gave up after the store's maximum number of WATCH retries (answered 503).", nil, nil)
	descConfigFaults = prometheus.NewDesc("inventory_store_config_faults_total",
		"Store calls (readiness probes included) that failed with a configuration fault of Redis or of the client (TLS, credentials, ACL, eviction policy, maxmemory, wrong URL form, password file); each fault is logged once, this shows that it persists. A store without its initialization marker is not one: inventory_store_uninitialized says it.", nil, nil)
	descUninitialized = prometheus.NewDesc("inventory_store_uninitialized",
		"1 while the store is not served for want of its initialization marker, by kind: not-initialized (never initialized: run inventory-server -init-only -seed once) or store-vanished (wiped under the server: restore it, or initialize it again); 0 otherwise.", []string{"kind"}, nil)
	descCutRetries = prometheus.NewDesc("inventory_store_cut_retries_total",
		"Store calls run once more because their Redis connection was cut under them (CLIENT KILL, a restart, the network): list reads, and updates cut before their EXEC was sent.", nil, nil)
	descCutAfterExec = prometheus.NewDesc("inventory_store_updates_cut_after_exec_total",
		"Updates whose Redis connection was cut with their EXEC in flight: outcome unknown, answered 503.", nil, nil)
	descAckShortfalls = prometheus.NewDesc("inventory_store_replica_ack_shortfalls_total",
		"Writes and list reads that fewer replicas acknowledged within the timeout than -replica-acks asks (answered 503).", nil, nil)
	descPoolHits     = prometheus.NewDesc("redis_pool_hits_total", "Times go-redis found a free connection in the pool.", nil, nil)
	descPoolMisses   = prometheus.NewDesc("redis_pool_misses_total", "Times go-redis found no free connection in the pool.", nil, nil)
	descPoolTimeouts = prometheus.NewDesc("redis_pool_timeouts_total", "Times waiting for a pool connection timed out.", nil, nil)
	descPoolWaits    = prometheus.NewDesc("redis_pool_waits_total", "Times a command waited for a pool connection.", nil, nil)
	descPoolWaitTime = prometheus.NewDesc("redis_pool_wait_duration_seconds_total", "Time spent waiting for pool connections.", nil, nil)
	descPoolStale    = prometheus.NewDesc("redis_pool_stale_connections_total", "Stale connections removed from the pool.", nil, nil)
	descPoolConns    = prometheus.NewDesc("redis_pool_connections", "Connections in the pool, by state (idle, in_use).", []string{"state"}, nil)
)

func (c redisCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWatchAborts, descRetriesExhausted, descConfigFaults, descUninitialized, descAckShortfalls, descCutRetries, descCutAfterExec, descPoolHits, descPoolMisses,
		descPoolTimeouts, descPoolWaits, descPoolWaitTime, descPoolStale, descPoolConns} {
		ch <- d
	}
}

func (c redisCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.store.Stats()
	ch <- prometheus.MustNewConstMetric(descWatchAborts, prometheus.CounterValue, float64(st.WatchAborts))
	ch <- prometheus.MustNewConstMetric(descRetriesExhausted, prometheus.CounterValue, float64(st.RetriesExhausted))
	ch <- prometheus.MustNewConstMetric(descConfigFaults, prometheus.CounterValue, float64(st.ConfigFaults))
	uninit := c.store.Uninitialized()
	for _, kind := range []string{redisstore.FaultNotInitialized, redisstore.FaultVanished} {
		ch <- prometheus.MustNewConstMetric(descUninitialized, prometheus.GaugeValue, boolValue(uninit == kind), kind)
	}
	ch <- prometheus.MustNewConstMetric(descCutRetries, prometheus.CounterValue, float64(st.CutRetries))
	ch <- prometheus.MustNewConstMetric(descCutAfterExec, prometheus.CounterValue, float64(st.CutAfterExec))
	ch <- prometheus.MustNewConstMetric(descAckShortfalls, prometheus.CounterValue, float64(st.AckShortfalls))
	ps := c.client.PoolStats()
	ch <- prometheus.MustNewConstMetric(descPoolHits, prometheus.CounterValue, float64(ps.Hits))
	ch <- prometheus.MustNewConstMetric(descPoolMisses, prometheus.CounterValue, float64(ps.Misses))
	ch <- prometheus.MustNewConstMetric(descPoolTimeouts, prometheus.CounterValue, float64(ps.Timeouts))
	ch <- prometheus.MustNewConstMetric(descPoolWaits, prometheus.CounterValue, float64(ps.WaitCount))
	ch <- prometheus.MustNewConstMetric(descPoolWaitTime, prometheus.CounterValue, float64(ps.WaitDurationNs)/1e9)
	ch <- prometheus.MustNewConstMetric(descPoolStale, prometheus.CounterValue, float64(ps.StaleConns))
	idle := float64(ps.IdleConns)
	ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, idle, "idle")
	ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, max(float64(ps.TotalConns)-idle, 0), "in_use")
}

// boolValue is a gauge's value of b: 1 or 0.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// redactSecrets is a span processor that removes, from the attributes the
// framework instrumentations set when a span starts, what may carry a
// credential the server never asked for: otelfiber records the user name
// of an "Authorization: Basic" header as enduser.id, and both record the
// request target, whose query string a client may have put a key in.
// The API itself reads keys from the Authorization header only.
type redactSecrets struct{}

var (
	queryKeys   = []attribute.Key{"http.target", "http.url", "url.full"}
	droppedKeys = []attribute.Key{"enduser.id", "url.query"}
)

func (redactSecrets) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	var fixes []attribute.KeyValue
	for _, a := range s.Attributes() {
		switch {
		case slices.Contains(droppedKeys, a.Key):
			fixes = append(fixes, a.Key.String("[redacted]"))
		case slices.Contains(queryKeys, a.Key):
			if v := a.Value.AsString(); strings.ContainsAny(v, "?@") {
				fixes = append(fixes, a.Key.String(withoutQuery(v)))
			}
		}
	}
	if len(fixes) > 0 {
		s.SetAttributes(fixes...)
	}
}

// withoutQuery drops the query and user info of a URL or request target.
func withoutQuery(v string) string {
	v, _, _ = strings.Cut(v, "?")
	if u, err := url.Parse(v); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return v
}

func (redactSecrets) OnEnd(sdktrace.ReadOnlySpan)      {}
func (redactSecrets) Shutdown(context.Context) error   { return nil }
func (redactSecrets) ForceFlush(context.Context) error { return nil }
