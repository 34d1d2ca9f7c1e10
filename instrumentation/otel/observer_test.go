package inventoryotel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	inventoryotel "github.com/petinventory/petinventory/instrumentation/otel"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The key and a wrong key both hold a marker that no attribute, label or
// log line may contain.
const (
	marker   = "SEEK7731"
	key      = "key-" + marker + "-valid"
	wrongKey = "key-" + marker + "-wrong"
)

// faultyPets is a real memstore whose SetQuantity fails for two pets the
// seed does not hold: 503 answers an outage, 500 a panicking backend.
type faultyPets struct{ inventory.Store }

const (
	petUnavailable = 503
	petPanics      = 500
)

func (s faultyPets) SetQuantity(ctx context.Context, petID int64, q int) (inventory.Item, error) {
	switch petID {
	case petUnavailable:
		return inventory.Item{}, inventory.Unavailable(errors.New("redis 10.0.0.1:6379: connection refused"))
	case petPanics:
		panic("backend bug")
	}
	return s.Store.SetQuantity(ctx, petID, q)
}

type fixture struct {
	reader  *sdkmetric.ManualReader
	spans   *tracetest.SpanRecorder
	tracer  trace.Tracer
	handler http.Handler
	log     *bytes.Buffer
}

// newFixture serves the API on a ServeMux under /v1, observed by an
// Observer on SDK providers. With serverSpans, each request runs in a
// server span, as the framework's instrumentation would start it.
func newFixture(t *testing.T, serverSpans bool) *fixture {
	t.Helper()
	f := &fixture{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder(), log: new(bytes.Buffer)}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	f.tracer = tp.Tracer("test-server")

	obs, err := inventoryotel.NewObserver(inventoryotel.WithMeterProvider(mp), inventoryotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	store, err := memstore.New(
		inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable},
		inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusSold})
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(faultyPets{store}, inventory.WithAPIKeys(key), inventory.WithObserver(obs),
		inventory.WithLogger(slog.New(slog.NewTextHandler(f.log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		t.Fatal(err)
	}
	f.handler = mux
	if serverSpans {
		f.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, span := f.tracer.Start(r.Context(), r.Method+" "+r.URL.Path, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("test.case", r.Header.Get("Test-Case"))))
			defer span.End()
			mux.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	return f
}

func (f *fixture) do(t *testing.T, testCase int, method, path, auth, body string) int {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Test-Case", fmt.Sprint(testCase))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	f.handler.ServeHTTP(w, req)
	return w.Code
}

// mix is one request of each kind of answer, with its expected status and
// metric attributes.
var mix = []struct {
	method, path, auth, body string
	status                   int
	attrs                    string // method route status code, as pointAttrs prints them
}{
	{"GET", "/v1/inventory", key, "", 200, "GET /v1/inventory 200"},
	{"GET", "/v1/inventory", wrongKey, "", 401, "GET /v1/inventory 401 unauthorized"},
	{"PATCH", "/v1/inventory/1", key, `{"quantity":5}`, 200, "PATCH /v1/inventory/{petId} 200"},
	{"PATCH", "/v1/inventory/999", key, `{"quantity":5}`, 404, "PATCH /v1/inventory/{petId} 404 not_found"},
	{"PATCH", "/v1/inventory/abc", key, `{"quantity":5}`, 400, "PATCH /v1/inventory/{petId} 400 invalid_pet_id"},
	{"PATCH", fmt.Sprint("/v1/inventory/", petUnavailable), key, `{"quantity":5}`, 503, "PATCH /v1/inventory/{petId} 503 unavailable"},
	{"PATCH", fmt.Sprint("/v1/inventory/", petPanics), key, `{"quantity":5}`, 500, "PATCH /v1/inventory/{petId} 500 internal"},
	{"BREW", "/v1/inventory", key, "", 405, "_OTHER /v1/inventory 405 method_not_allowed"},
	{"DELETE", "/v1/inventory/1", key, "", 405, "DELETE /v1/inventory/{petId} 405 method_not_allowed"},
}

func pointAttrs(s attribute.Set) string {
	parts := []string{}
	for _, k := range []attribute.Key{"http.request.method", "http.route", "http.response.status_code", inventoryotel.ErrorCodeKey,
		inventoryotel.StoreOperationKey, inventoryotel.StoreOutcomeKey} {
		if v, ok := s.Value(k); ok {
			parts = append(parts, v.String())
		}
	}
	return strings.Join(parts, " ")
}

// histogramCounts returns each data point's count of the histogram name,
// by its attributes.
func histogramCounts(t *testing.T, rm metricdata.ResourceMetrics, name string) map[string]uint64 {
	t.Helper()
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if sm.Scope.Name != inventoryotel.ScopeName || sm.Scope.Version != inventoryotel.Version() || m.Unit != "s" {
				t.Errorf("%s: scope %q version %q unit %q, want %q %q and s", name, sm.Scope.Name, sm.Scope.Version, m.Unit, inventoryotel.ScopeName, inventoryotel.Version())
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
			}
			for _, p := range h.DataPoints {
				counts[pointAttrs(p.Attributes)] += p.Count
			}
		}
	}
	return counts
}

func TestObserverMetricsAndSpans(t *testing.T) {
	f := newFixture(t, true)
	wantReq := map[string]uint64{}
	for i, r := range mix {
		if got := f.do(t, i, r.method, r.path, r.auth, r.body); got != r.status {
			t.Fatalf("%s %s: status %d, want %d", r.method, r.path, got, r.status)
		}
		wantReq[r.attrs]++
	}

	var rm metricdata.ResourceMetrics
	if err := f.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if got := histogramCounts(t, rm, inventoryotel.RequestDurationName); !mapsEqual(got, wantReq) {
		t.Errorf("request durations by attributes:\n got %v\nwant %v", got, wantReq)
	}
	wantStore := map[string]uint64{"list ok": 1, "set_quantity ok": 1, "set_quantity not_found": 1,
		"set_quantity unavailable": 1, "set_quantity internal": 1}
	if got := histogramCounts(t, rm, inventoryotel.StoreOperationDurationName); !mapsEqual(got, wantStore) {
		t.Errorf("store durations by attributes:\n got %v\nwant %v", got, wantStore)
	}

	// Spans: one server span per request; under those that reached the
	// store, one store span inside it, with the store call's outcome.
	ended := f.spans.Ended()
	servers := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		if s.SpanKind() == trace.SpanKindServer {
			servers[s.SpanContext().SpanID()] = s
		}
	}
	if len(servers) != len(mix) {
		t.Fatalf("%d server spans, want %d", len(servers), len(mix))
	}
	wantOutcomes := map[string]string{ // server span name -> store span outcome
		"GET /v1/inventory":     "ok",
		"PATCH /v1/inventory/1": "ok", "PATCH /v1/inventory/999": "not_found",
		"PATCH /v1/inventory/503": "unavailable", "PATCH /v1/inventory/500": "internal",
	}
	stores := 0
	for _, s := range ended {
		if s.SpanKind() == trace.SpanKindServer {
			continue
		}
		stores++
		if sc := s.InstrumentationScope(); sc.Name != inventoryotel.ScopeName || sc.Version != inventoryotel.Version() {
			t.Errorf("span %q: scope %q version %q; want %q %q", s.Name(), sc.Name, sc.Version, inventoryotel.ScopeName, inventoryotel.Version())
		}
		parent, ok := servers[s.Parent().SpanID()]
		if !ok {
			t.Errorf("span %q has no server span as its parent", s.Name())
			continue
		}
		attrs := attribute.NewSet(s.Attributes()...)
		outcome, _ := attrs.Value(inventoryotel.StoreOutcomeKey)
		op, _ := attrs.Value(inventoryotel.StoreOperationKey)
		if want := wantOutcomes[parent.Name()]; outcome.AsString() != want || s.Name() != "inventory.store."+op.AsString() {
			t.Errorf("under %q: span %q outcome %q, want inventory.store.%s with outcome %q", parent.Name(), s.Name(), outcome.AsString(), op.AsString(), want)
		}
		if s.StartTime().Before(parent.StartTime()) || s.EndTime().After(parent.EndTime()) || !s.EndTime().After(s.StartTime()) {
			t.Errorf("span %q [%v, %v] is not within its server span [%v, %v]", s.Name(), s.StartTime(), s.EndTime(), parent.StartTime(), parent.EndTime())
		}
		failed := outcome.AsString() == "unavailable" || outcome.AsString() == "internal"
		if failed != (s.Status().Code == codes.Error) || failed != (len(s.Events()) == 1) {
			t.Errorf("span %q (outcome %s): status %v, %d events; want an error status and the error recorded exactly when the call failed",
				s.Name(), outcome.AsString(), s.Status(), len(s.Events()))
		}
	}
	if stores != len(wantOutcomes) {
		t.Errorf("%d store spans, want %d", stores, len(wantOutcomes))
	}
	for _, s := range servers {
		attrs := attribute.NewSet(s.Attributes()...)
		code, _ := attrs.Value(inventoryotel.ErrorCodeKey)
		tc, _ := attrs.Value("test.case")
		var want string
		i, err := strconv.Atoi(tc.AsString())
		if err != nil {
			t.Fatalf("server span %q: test.case %q", s.Name(), tc.AsString())
		}
		if r := mix[i]; r.status != 200 {
			want = r.attrs[strings.LastIndexByte(r.attrs, ' ')+1:]
		}
		if code.AsString() != want {
			t.Errorf("server span %q: inventory.error_code %q, want %q", s.Name(), code.AsString(), want)
		}
		if wantErr := strings.HasSuffix(s.Name(), "/500") || strings.HasSuffix(s.Name(), "/503"); (s.Status().Code == codes.Error) != wantErr {
			t.Errorf("server span %q: status %v", s.Name(), s.Status())
		}
	}

	// Nothing exported holds the key or the wrong key: every span name,
	// attribute, event and status, every metric attribute, every log line.
	var exported []string
	for _, s := range ended {
		exported = append(exported, s.Name(), s.Status().Description)
		for _, a := range s.Attributes() {
			exported = append(exported, string(a.Key)+"="+a.Value.String())
		}
		for _, e := range s.Events() {
			exported = append(exported, e.Name)
			for _, a := range e.Attributes {
				exported = append(exported, string(a.Key)+"="+a.Value.String())
			}
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			exported = append(exported, m.Name)
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, p := range h.DataPoints {
					for _, a := range p.Attributes.ToSlice() {
						exported = append(exported, string(a.Key)+"="+a.Value.String())
					}
				}
			}
		}
	}
	exported = append(exported, f.log.String())
	if len(exported) < 50 {
		t.Fatalf("only %d exported strings: the search below would prove little", len(exported))
	}
	for _, s := range exported {
		if strings.Contains(s, marker) {
			t.Errorf("exported text holds the key: %q", s)
		}
	}
}

func mapsEqual(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Without a recording span in the request's context, the store calls make
// no span (there is no trace to put them in), and the metrics are the same.
func TestNoStoreSpanWithoutRequestSpan(t *testing.T) {
	f := newFixture(t, false)
	if got := f.do(t, 0, "PATCH", "/v1/inventory/1", key, `{"quantity":4}`); got != 200 {
		t.Fatalf("status %d", got)
	}
	if n := len(f.spans.Ended()); n != 0 {
		t.Errorf("%d spans without a request span, want 0", n)
	}
	var rm metricdata.ResourceMetrics
	if err := f.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"set_quantity ok": 1}
	if got := histogramCounts(t, rm, inventoryotel.StoreOperationDurationName); !mapsEqual(got, want) {
		t.Errorf("store durations %v, want %v", got, want)
	}
}

// With no provider option, the Observer records with the global providers,
// as OpenTelemetry instrumentation does.
func TestGlobalProviders(t *testing.T) {
	prev := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(prev) })
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))

	obs, err := inventoryotel.NewObserver(inventoryotel.WithRoutePrefix(""))
	if err != nil {
		t.Fatal(err)
	}
	obs.ObserveRequest(context.Background(), inventory.RequestObservation{Route: inventory.RouteItem, Method: "PATCH", Status: 200})
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"PATCH /inventory/{petId} 200": 1}
	if got := histogramCounts(t, rm, inventoryotel.RequestDurationName); !mapsEqual(got, want) {
		t.Errorf("request durations on the global provider %v, want %v", got, want)
	}
}

func TestRoutePrefix(t *testing.T) {
	for _, p := range []string{"v1", "/v1/", "/"} {
		_, err := inventoryotel.NewObserver(inventoryotel.WithRoutePrefix(p))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", p)) {
			t.Errorf("WithRoutePrefix(%q): %v, want an error naming the prefix", p, err)
		}
	}
	for _, p := range []string{"", "/v1", "/api/v2"} {
		if _, err := inventoryotel.NewObserver(inventoryotel.WithRoutePrefix(p)); err != nil {
			t.Errorf("WithRoutePrefix(%q): %v", p, err)
		}
	}
}

func TestNilOption(t *testing.T) {
	if o, err := inventoryotel.NewObserver(inventoryotel.WithRoutePrefix("/v1"), nil); o != nil || err == nil || !strings.Contains(err.Error(), "option 2 is nil") {
		t.Errorf("NewObserver with a nil option = %v, %v; want an error naming it", o, err)
	}
}

func TestMethod(t *testing.T) {
	for _, m := range []string{"GET", "PATCH", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "CONNECT", "TRACE", "QUERY"} {
		if got := inventoryotel.Method(m); got != m {
			t.Errorf("Method(%q) = %q", m, got)
		}
	}
	// The result does not alias its argument, which may be a view of a
	// buffer the framework reuses.
	buf := []byte("PATCH")
	got := inventoryotel.Method(unsafe.String(&buf[0], len(buf)))
	copy(buf, "GETCH")
	if got != "PATCH" {
		t.Errorf("Method's result changed with the buffer its argument viewed: %q", got)
	}
	for _, m := range []string{"get", "Patch", "BREW", "PROPFIND", "", strings.Repeat("X", 1000)} {
		if got := inventoryotel.Method(m); got != "_OTHER" {
			t.Errorf("Method(%q) = %q, want _OTHER", m, got)
		}
	}
}

// outagePets is a real memstore whose list reads fail as unavailable while
// down is set: a store out of reach.
type outagePets struct {
	*memstore.Store
	down atomic.Bool
}

func (s *outagePets) List(ctx context.Context) ([]inventory.Item, error) {
	if s.down.Load() {
		return nil, inventory.Unavailable(errors.New("connection refused"))
	}
	return s.Store.List(ctx)
}

func (s *outagePets) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if s.down.Load() {
		return inventory.Changes{}, inventory.Unavailable(errors.New("connection refused"))
	}
	return s.Store.ListChanges(ctx, since)
}

// A list answered stale through an outage (WithStaleIfError) is counted,
// its age recorded, and its span marked; a fresh list is none of these.
func TestObserverStaleLists(t *testing.T) {
	reader, spans := sdkmetric.NewManualReader(), tracetest.NewSpanRecorder()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	obs, err := inventoryotel.NewObserver(inventoryotel.WithMeterProvider(mp), inventoryotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	if err != nil {
		t.Fatal(err)
	}
	store := &outagePets{Store: mem}
	api, err := inventory.New(store, inventory.WithAPIKeys(key), inventory.WithObserver(obs), inventory.WithStoreTimeout(time.Second),
		inventory.WithStaleIfError(30*time.Second), inventory.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	tracer := tp.Tracer("test-server")
	list := func(name string) *httptest.ResponseRecorder {
		ctx, span := tracer.Start(context.Background(), name, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		req := httptest.NewRequest("GET", "/inventory", nil).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		return w
	}
	if w := list("fresh"); w.Code != 200 || w.Header().Get("Cache-Status") != "" {
		t.Fatalf("a fresh list: %d %v", w.Code, w.Header())
	}
	store.down.Store(true)
	if w := list("stale"); w.Code != 200 || w.Header().Get("Cache-Status") == "" {
		t.Fatalf("a list through the outage: %d %v; want 200 marked stale", w.Code, w.Header())
	}
	for _, s := range spans.Ended() {
		stale, age := false, -1.0
		for _, a := range s.Attributes() {
			switch a.Key {
			case inventoryotel.ListStaleKey:
				stale = a.Value.AsBool()
			case inventoryotel.ListAgeKey:
				age = a.Value.AsFloat64()
			}
		}
		if want := s.Name() == "stale"; stale != want || (age >= 0) != want || age > 30 {
			t.Errorf("span %s: %s=%v %s=%v; want the stale mark and an age within the bound on the stale list only", s.Name(), inventoryotel.ListStaleKey, stale, inventoryotel.ListAgeKey, age)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var count int64 = -1
	var age float64 = -1
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if m.Name == inventoryotel.ListsStaleName && len(d.DataPoints) == 1 {
					count = d.DataPoints[0].Value
				}
			case metricdata.Gauge[float64]:
				if m.Name == inventoryotel.ListStaleAgeName && len(d.DataPoints) == 1 {
					age = d.DataPoints[0].Value
				}
			}
		}
	}
	if count != 1 || age < 0 || age > 30 {
		t.Errorf("%s %d and %s %v; want 1 and an age within the bound", inventoryotel.ListsStaleName, count, inventoryotel.ListStaleAgeName, age)
	}
}
