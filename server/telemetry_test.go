package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	inventoryotel "github.com/petinventory/petinventory/instrumentation/otel"
	"github.com/petinventory/petinventory/inventory"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// secretMarker is in every credential the telemetry tests send; no span,
// metric or log line may hold it.
const secretMarker = "SECRET9c1f"

// observed is the example's API, mounted as run mounts it, on a store over
// miniredis, with the telemetry of newTelemetryWith.
type observed struct {
	serve func(t *testing.T, r *http.Request) (status int, body string)
	spans *tracetest.SpanRecorder
	log   *bytes.Buffer
	tel   *telemetry
	app   *fiber.App // for Fiber
}

// newObserved builds it for framework, tracing into a span recorder when
// traced is true (as with OTEL_EXPORTER_OTLP_ENDPOINT set), with no
// tracing at all otherwise.
func newObserved(t *testing.T, framework string, traced bool) *observed {
	t.Helper()
	mr := newRedis(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), DemoInventory()...); err != nil {
		t.Fatal(err)
	}
	o := &observed{log: new(bytes.Buffer)}
	var tp *sdktrace.TracerProvider
	if traced {
		o.spans = tracetest.NewSpanRecorder()
		tp = newTracerProvider(sdktrace.WithSpanProcessor(o.spans))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	}
	if o.tel, err = newTelemetryWith(client, store, tp); err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(testKey+secretMarker), inventory.WithObserver(o.tel.observer),
		inventory.WithLogger(slog.New(slog.NewTextHandler(o.log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	switch framework {
	case "gin":
		gin.SetMode(gin.ReleaseMode)
		engine := gin.New()
		o.tel.mountGin(engine, true)
		if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		o.serve = func(t *testing.T, r *http.Request) (int, string) {
			w := httptest.NewRecorder()
			engine.ServeHTTP(w, r)
			return w.Code, w.Body.String()
		}
	case "fiber":
		app := newFiberApp()
		o.tel.mountFiber(app, true)
		if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
			t.Fatal(err)
		}
		o.app = app
		o.serve = func(t *testing.T, r *http.Request) (int, string) {
			t.Helper()
			resp, err := app.Test(r, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, string(b)
		}
	}
	return o
}

func request(method, target, auth, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// A PATCH through Gin and through Fiber makes one trace: the framework's
// server span, and under it the store call's span and the Redis commands'
// spans, the commands within the store call. No span holds a credential,
// even one sent where the API never reads it (Basic auth, a query string).
func TestTraces(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			o := newObserved(t, fw, true)
			bearer := "Bearer " + testKey + secretMarker
			if status, body := o.serve(t, request("PATCH", "/v1/inventory/3?api_key="+secretMarker, bearer, `{"quantity":42}`)); status != 200 {
				t.Fatalf("PATCH: %d %s", status, body)
			}
			patch := o.spans.Ended()
			basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user-"+secretMarker+":pw"))
			if status, body := o.serve(t, request("GET", "/v1/inventory", basic, "")); status != 401 {
				t.Fatalf("GET with Basic auth: %d %s", status, body)
			}
			if status, _ := o.serve(t, request("GET", "/healthz-not-here", "", "")); status != 404 {
				t.Fatalf("unknown path: %d", status)
			}
			if status, _ := o.serve(t, request("GET", "/metrics", "", "")); status != 200 {
				t.Fatalf("/metrics: %d", status)
			}
			all := o.spans.Ended()

			var server sdktrace.ReadOnlySpan
			for _, s := range patch {
				if s.SpanKind() == trace.SpanKindServer {
					if server != nil {
						t.Fatalf("two server spans for one PATCH: %q, %q", server.Name(), s.Name())
					}
					server = s
				}
			}
			if server == nil {
				t.Fatalf("no server span among %d spans", len(patch))
			}
			// Every span of the PATCH descends from the server span,
			// except go-redis's redis.dial: a new connection is dialled
			// outside the request's context (its HELLO is under the
			// command that needed it). The store span and the commands
			// the store sent are the server span's children.
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, s := range patch {
				byID[s.SpanContext().SpanID()] = s
			}
			var store sdktrace.ReadOnlySpan
			var commands []sdktrace.ReadOnlySpan
			for _, s := range patch {
				if s == server || s.Name() == "redis.dial" {
					continue
				}
				p := s
				for p != nil && p != server {
					p = byID[p.Parent().SpanID()]
				}
				if p == nil || s.SpanContext().TraceID() != server.SpanContext().TraceID() {
					t.Errorf("span %q (parent %s) is not under the server span %q", s.Name(), s.Parent().SpanID(), server.Name())
				}
				if s.Parent().SpanID() != server.SpanContext().SpanID() {
					continue
				}
				if s.Name() == "inventory.store.set_quantity" {
					store = s
				} else if attr(s, "db.system") == "redis" {
					commands = append(commands, s)
				} else {
					t.Errorf("unexpected span %q under the server span", s.Name())
				}
			}
			if store == nil || attr(store, "inventory.store.outcome") != "ok" {
				t.Fatalf("no store span with outcome ok under %q", server.Name())
			}
			if len(commands) == 0 {
				t.Fatal("no Redis command span under the server span")
			}
			inside := 0
			for _, c := range commands {
				if !c.StartTime().Before(store.StartTime()) && !c.EndTime().After(store.EndTime()) {
					inside++
				}
			}
			if inside == 0 {
				t.Errorf("none of the %d Redis command spans lies within the store span", len(commands))
			}
			if code := attr(server, "inventory.error_code"); code != "" {
				t.Errorf("server span of a 200 has inventory.error_code %q", code)
			}
			// Only the API's routes are traced: the 401 adds one server
			// span; the unknown path and /metrics none.
			if n := len(all) - len(patch); n != 1 {
				t.Errorf("%d spans after the PATCH, want 1 (the 401's server span)", n)
			} else if code := attr(all[len(all)-1], "inventory.error_code"); code != "unauthorized" {
				t.Errorf("the 401's span: inventory.error_code %q", code)
			}

			texts := []string{o.log.String()}
			for _, s := range all {
				texts = append(texts, s.Name(), s.Status().Description)
				for _, a := range s.Attributes() {
					texts = append(texts, string(a.Key)+"="+a.Value.String())
				}
				for _, e := range s.Events() {
					texts = append(texts, e.Name)
					for _, a := range e.Attributes {
						texts = append(texts, string(a.Key)+"="+a.Value.String())
					}
				}
			}
			joined := strings.Join(texts, "\n")
			if !strings.Contains(joined, "/v1/inventory/3") || len(texts) < 30 {
				t.Fatalf("the spans hold too little for the search below to prove anything:\n%s", joined)
			}
			if strings.Contains(joined, secretMarker) {
				t.Errorf("a credential is in a span or the log:\n%s", joined)
			}
			t.Logf("%s: %d spans for the PATCH (%d Redis commands, %d within the store span)", fw, len(patch), len(commands), inside)
		})
	}
}

// GET /metrics serves the Prometheus text format, with the request counts
// by route, method and status, the store calls by operation and outcome,
// the store's and go-redis's counters and the Go runtime's.
func TestMetricsEndpoint(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			o := newObserved(t, fw, false)
			if o.tel.tracer != nil {
				t.Fatal("tracing is on with no tracer provider")
			}
			bearer := "Bearer " + testKey + secretMarker
			for range 3 {
				o.serve(t, request("GET", "/v1/inventory", bearer, ""))
			}
			o.serve(t, request("GET", "/v1/inventory", "Bearer wrong"+secretMarker, ""))
			for _, c := range []struct {
				pet, body string
				status    int
			}{{"1", `{"quantity":5}`, 200}, {"12345", `{"quantity":5}`, 404}, {"1", `{"quantity":-1}`, 400}} {
				if status, body := o.serve(t, request("PATCH", "/v1/inventory/"+c.pet, bearer, c.body)); status != c.status {
					t.Fatalf("PATCH %s %s: %d %s, want %d", c.pet, c.body, status, body, c.status)
				}
			}

			r := request("GET", "/metrics", "", "")
			status, body := o.serve(t, r)
			if status != 200 {
				t.Fatalf("/metrics: %d %s", status, body)
			}
			for _, line := range []string{
				`inventory_http_requests_total{code="",method="GET",route="list",status="200"} 3`,
				`inventory_http_requests_total{code="unauthorized",method="GET",route="list",status="401"} 1`,
				`inventory_http_requests_total{code="",method="PATCH",route="item",status="200"} 1`,
				`inventory_http_requests_total{code="not_found",method="PATCH",route="item",status="404"} 1`,
				`inventory_http_requests_total{code="invalid_field",method="PATCH",route="item",status="400"} 1`,
				`inventory_http_request_duration_seconds_count{method="GET",route="list"} 4`,
				`inventory_http_request_duration_seconds_bucket{method="PATCH",route="item",le="+Inf"} 3`,
				`inventory_store_operation_duration_seconds_count{operation="list",outcome="ok"} 3`,
				`inventory_store_operation_duration_seconds_count{operation="set_quantity",outcome="ok"} 1`,
				`inventory_store_operation_duration_seconds_count{operation="set_quantity",outcome="not_found"} 1`,
				`inventory_store_watch_aborts_total 0`,
				`inventory_store_retries_exhausted_total 0`,
				`inventory_store_config_faults_total 0`,
				`inventory_store_uninitialized{kind="not-initialized"} 0`,
				`inventory_store_uninitialized{kind="store-vanished"} 0`,
				`inventory_lists_stale_total 0`,
				`inventory_lists_stale_age_seconds 0`,
				`redis_pool_timeouts_total 0`,
				`# TYPE redis_pool_hits_total counter`,
				`# TYPE redis_pool_connections gauge`,
				`# TYPE go_goroutines gauge`,
				`# TYPE go_gc_duration_seconds summary`,
			} {
				if !strings.Contains(body, "\n"+line) {
					t.Errorf("/metrics has no line %s", line)
				}
			}
			if strings.Contains(body, secretMarker) {
				t.Error("/metrics holds a key")
			}
		})
	}
}

// A 405 may carry any method token; the metrics fold the unknown ones into
// _OTHER, so that a client cannot create series at will.
func TestMetricsMethodsBounded(t *testing.T) {
	p := newPromObserver()
	for _, m := range []string{"BREW", "PROPFIND", "get", "X-" + secretMarker} {
		p.ObserveRequest(context.Background(), inventory.RequestObservation{Route: inventory.RouteList, Method: m, Status: 405, Code: inventory.CodeMethodNotAllowed})
	}
	p.ObserveRequest(context.Background(), inventory.RequestObservation{Route: inventory.RouteItem, Method: "DELETE", Status: 405, Code: inventory.CodeMethodNotAllowed})
	reg := newRegistry(t, p)
	body := gather(t, reg)
	for _, line := range []string{
		`inventory_http_requests_total{code="method_not_allowed",method="_OTHER",route="list",status="405"} 4`,
		`inventory_http_requests_total{code="method_not_allowed",method="DELETE",route="item",status="405"} 1`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("no line %s in\n%s", line, body)
		}
	}
	if strings.Contains(body, secretMarker) || strings.Count(body, "inventory_http_requests_total{") != 2 {
		t.Errorf("want exactly two request series:\n%s", body)
	}
}

// Fiber with tracing on: otelfiber reads the request body after the
// handler to measure it, which on a streamed body would read everything a
// client sends into memory; dropUnreadBody keeps the adapter's bound. A
// 64 MiB PATCH over a real socket must be answered 413 with most of it
// never read.
func TestFiberTracingKeepsTheBodyBound(t *testing.T) {
	app := newObserved(t, "fiber", true).app
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	const size = 64 << 20
	body := &countingZeros{left: size}
	req, err := http.NewRequest("PATCH", "http://"+ln.Addr().String()+"/v1/inventory/1", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+testKey+secretMarker)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", resp.StatusCode)
		}
	}
	sent := body.sent.Load()
	t.Logf("64 MiB PATCH through Fiber with tracing: %d KiB taken by the server before it answered (%v, client error: %v)", sent>>10, time.Since(start).Round(time.Millisecond), err)
	if sent > size/4 {
		t.Errorf("the server read %d MiB of a refused 64 MiB body", sent>>20)
	}
}

// countingZeros is a request body of left zero bytes that counts what was
// read of it.
type countingZeros struct {
	left int64
	sent atomic.Int64
}

func (c *countingZeros) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), c.left))
	clear(p[:n])
	c.left -= int64(n)
	c.sent.Add(int64(n))
	return n, nil
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

func newRegistry(t *testing.T, p *promObserver) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{p.requests, p.requestDuration, p.storeDuration} {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// gather returns what GET /metrics would serve from reg.
func gather(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 {
		t.Fatalf("/metrics: %d %s", w.Code, w.Body)
	}
	return w.Body.String()
}

// abortWatches is a go-redis hook that, after each WATCH while armed,
// writes the watched key from another client: the transaction's EXEC is
// then refused, as when a pet is re-seeded or deleted mid-update. The
// store sends WATCH in a pipeline with its read, so both paths are hooked.
type abortWatches struct {
	other *redis.Client
	armed atomic.Int64
}

func (h *abortWatches) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *abortWatches) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if werr := h.afterWatch(ctx, cmd); werr != nil {
				return werr
			}
		}
		return err
	}
}
func (h *abortWatches) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if werr := h.afterWatch(ctx, cmd); werr != nil {
			return werr
		}
		return err
	}
}

// afterWatch writes the key a successful WATCH watched, while armed.
func (h *abortWatches) afterWatch(ctx context.Context, cmd redis.Cmder) error {
	if cmd.Name() != "watch" || cmd.Err() != nil || h.armed.Add(-1) < 0 {
		return nil
	}
	key := fmt.Sprint(cmd.Args()[1])
	if err := h.other.Set(ctx, key, "1", 0).Err(); err != nil {
		return fmt.Errorf("writing the watched key %s: %w", key, err)
	}
	return nil
}

// The store's WATCH aborts and exhausted retries reach /metrics as
// counters, read from redisstore.Stats at scrape time.
func TestMetricsWatchCounters(t *testing.T) {
	mr := newRedis(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	other := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close(); _ = other.Close() })
	hook := &abortWatches{other: other}
	client.AddHook(hook)
	store, err := redisstore.New(client, redisstore.WithMaxRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), DemoInventory()...); err != nil {
		t.Fatal(err)
	}
	engine := metricsEngine(t, client, store)
	patch := func(want int) {
		t.Helper()
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, request("PATCH", "/v1/inventory/1", "Bearer "+testKey, `{"quantity":2}`))
		if w.Code != want {
			t.Fatalf("PATCH: %d %s, want %d", w.Code, w.Body, want)
		}
	}
	hook.armed.Store(1) // one abort, then the retry succeeds
	patch(200)
	hook.armed.Store(3) // the first try and both retries abort
	patch(503)

	w := httptest.NewRecorder()
	engine.ServeHTTP(w, request("GET", "/metrics", "", ""))
	for _, line := range []string{
		"inventory_store_watch_aborts_total 4",
		"inventory_store_retries_exhausted_total 1",
		`inventory_store_operation_duration_seconds_count{operation="set_quantity",outcome="ok"} 1`,
		`inventory_store_operation_duration_seconds_count{operation="set_quantity",outcome="unavailable"} 1`,
		`inventory_http_requests_total{code="unavailable",method="PATCH",route="item",status="503"} 1`,
	} {
		if !strings.Contains(w.Body.String(), "\n"+line+"\n") {
			t.Errorf("/metrics has no line %s", line)
		}
	}
}

// metricsEngine is a Gin engine serving the API on store under /v1 and
// GET /metrics, with the server's telemetry (tracing off).
func metricsEngine(t *testing.T, client redis.UniversalClient, store *redisstore.Store) *gin.Engine {
	t.Helper()
	tel, err := newTelemetryWith(client, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(testKey), inventory.WithObserver(tel.observer),
		inventory.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	tel.mountGin(engine, true)
	if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
		t.Fatal(err)
	}
	return engine
}

// A write that no replica acknowledges (a Redis with none, and
// -replica-acks 1) is answered 503 and counted in
// inventory_store_replica_ack_shortfalls_total, which the
// InventoryReplicaAckShortfall alert of deploy/prometheus reads.
func TestMetricsReplicaAckShortfalls(t *testing.T) {
	node := newRedis(t)
	seeder := redis.NewClient(&redis.Options{Addr: node.Addr()})
	client := redis.NewClient(&redis.Options{Addr: node.Addr()})
	t.Cleanup(func() { _ = seeder.Close(); _ = client.Close() })
	plain, err := redisstore.New(seeder)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Put(context.Background(), DemoInventory()...); err != nil {
		t.Fatal(err)
	}
	store, err := redisstore.New(client, redisstore.WithReplicaAcks(1, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	engine := metricsEngine(t, client, store)
	w := httptest.NewRecorder()
	engine.ServeHTTP(w, request("PATCH", "/v1/inventory/1", "Bearer "+testKey, `{"quantity":2}`))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("PATCH with no replica to acknowledge it: %d %s, want 503", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	engine.ServeHTTP(w, request("GET", "/metrics", "", ""))
	if line := "inventory_store_replica_ack_shortfalls_total 1"; !strings.Contains(w.Body.String(), "\n"+line+"\n") {
		t.Errorf("/metrics has no line %s", line)
	}
}

// With an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) set, the server exports its spans over
// OTLP/HTTP: here to a collector stand-in that decodes what it receives.
// The spans of a PATCH arrive by the end of the graceful shutdown, and no
// byte of the export holds the key.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var names []string
	var raw []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if r.URL.Path != "/v1/traces" || err != nil {
			t.Errorf("collector: %s %s: %v", r.Method, r.URL.Path, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		raw = append(raw, b...)
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	for _, fw := range []string{"gin", "fiber"} {
		mu.Lock()
		names, raw = nil, nil
		mu.Unlock()
		s := start(t, Config{Framework: fw, OTLPEndpoint: collector.URL})
		if r := s.do(t, "PATCH", "/v1/inventory/1", testKey, `{"quantity":4}`); r.status != 200 {
			t.Fatalf("%s PATCH: %d %s", fw, r.status, r.body)
		}
		s.shutdown(t) // flushes the spans
		mu.Lock()
		got := strings.Join(names, ", ")
		leaked, size := bytes.Contains(raw, []byte(testKey)), len(raw)
		mu.Unlock()
		// The update's WATCH, HGET and the check of the store's
		// initialization marker go in one pipeline (one round trip).
		for _, want := range []string{"inventory.store.set_quantity", "redis.pipeline watch hget exists"} {
			if !strings.Contains(", "+got+", ", ", "+want+", ") {
				t.Errorf("%s: exported spans %q lack %q", fw, got, want)
			}
		}
		if !strings.Contains(got, "/v1/inventory/:petId") {
			t.Errorf("%s: exported spans %q lack the server span", fw, got)
		}
		if leaked {
			t.Errorf("%s: the OTLP export holds the key", fw)
		}
		t.Logf("%s: exported %d bytes of spans: %s", fw, size, got)
		if !strings.Contains(s.logs.String(), "tracing on") {
			t.Errorf("%s: the log does not say tracing is on:\n%s", fw, s.logs)
		}
	}
}

// With no OTLP endpoint, nothing is set up for traces.
func TestNoTracingByDefault(t *testing.T) {
	tp, err := otlpTracerProvider(context.Background(), Config{}, slog.New(slog.DiscardHandler))
	if tp != nil || err != nil {
		t.Fatalf("otlpTracerProvider with no endpoint = %v, %v; want nil, nil", tp, err)
	}
	o := newObserved(t, "gin", false)
	if _, isProm := o.tel.observer.(*promObserver); !isProm || o.tel.tracer != nil {
		t.Errorf("with tracing off the observer is %T and the tracer %v; want the Prometheus observer alone", o.tel.observer, o.tel.tracer)
	}
}

func TestEndpointForLog(t *testing.T) {
	for in, want := range map[string]string{
		"http://collector:4318": "http://collector:4318",
		"https://user:" + secretMarker + "@otlp.example/x?token=" + secretMarker: "https://otlp.example/x",
		"not a url": "(unparsable endpoint)",
	} {
		if got := endpointForLog(in); got != want {
			t.Errorf("endpointForLog(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkPromObserveRequest is the metrics' cost on every request (a
// list answered 200), through the observer's held series (observer) and
// through the vectors' WithLabelValues on each call (vectors), its cost
// before the series were held; compare the two within one run.
func BenchmarkPromObserveRequest(b *testing.B) {
	r := inventory.RequestObservation{Route: inventory.RouteList, Method: "GET", Status: 200, Duration: 300 * time.Microsecond}
	b.Run("observer", func(b *testing.B) {
		p := newPromObserver()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.ObserveRequest(context.Background(), r)
			}
		})
	})
	b.Run("vectors", func(b *testing.B) {
		p := newPromObserver()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				route, method := r.Route.String(), inventoryotel.Method(r.Method)
				p.requests.WithLabelValues(route, method, strconv.Itoa(r.Status), string(r.Code)).Inc()
				p.requestDuration.WithLabelValues(route, method).Observe(r.Duration.Seconds())
			}
		})
	})
}
