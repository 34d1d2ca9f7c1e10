package inventoryotel_test

// The benchmarks measure what observing costs, on the inventory package's
// own net/http list and update benchmarks (internal/benchfix), in one run:
//
//	go test -run '^$' -bench . -benchmem -count 3
//
//   - "none": no observer, the default; the same as the inventory
//     package's "lib" side.
//   - "otel-noop": the Observer on OpenTelemetry's no-op providers, what a
//     host pays for compiling the instrumentation in with no SDK set up.
//   - "otel-sdk": the Observer on the SDK's MeterProvider (a manual reader:
//     aggregation, no export) and a no-op tracer, the cost of the metrics.

import (
	"context"
	"net/http"
	"testing"

	inventoryotel "github.com/petinventory/petinventory/instrumentation/otel"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

func benchHandler(b *testing.B, items []inventory.Item, opts ...inventory.Option) http.Handler {
	b.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		b.Fatal(err)
	}
	api, err := inventory.New(store, append([]inventory.Option{inventory.WithAPIKeys(benchfix.Key)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		b.Fatal(err)
	}
	return mux
}

func benchObserved(b *testing.B, items []inventory.Item, opts ...inventoryotel.Option) http.Handler {
	b.Helper()
	obs, err := inventoryotel.NewObserver(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return benchHandler(b, items, inventory.WithObserver(obs))
}

var benchSides = []benchfix.Side{
	{Name: "none", Handler: func(b *testing.B, items []inventory.Item) http.Handler { return benchHandler(b, items) }},
	{Name: "otel-noop", Handler: func(b *testing.B, items []inventory.Item) http.Handler {
		return benchObserved(b, items, inventoryotel.WithMeterProvider(metricnoop.NewMeterProvider()),
			inventoryotel.WithTracerProvider(tracenoop.NewTracerProvider()))
	}},
	{Name: "otel-sdk", Handler: func(b *testing.B, items []inventory.Item) http.Handler {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		return benchObserved(b, items, inventoryotel.WithMeterProvider(mp),
			inventoryotel.WithTracerProvider(tracenoop.NewTracerProvider()))
	}},
}

func BenchmarkList(b *testing.B)   { benchfix.BenchmarkList(b, benchSides) }
func BenchmarkUpdate(b *testing.B) { benchfix.BenchmarkUpdate(b, benchSides) }

// BenchmarkObserve is the Observer's own cost per request: one
// ObserveRequest and one ObserveStore, as the API calls them for an
// update, without the API around them. "sdk+span" runs under a sampled
// span, as with a traced request, so that the store span is made too.
func BenchmarkObserve(b *testing.B) {
	req := inventory.RequestObservation{Route: inventory.RouteItem, Method: "PATCH", Status: 200, Duration: 1500}
	st := inventory.StoreObservation{Op: inventory.StoreOpSetQuantity, Outcome: inventory.OutcomeOK, Duration: 900}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider() // no exporter: spans are made and dropped
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	traced, span := tp.Tracer("bench").Start(context.Background(), "server")
	defer span.End()
	for _, c := range []struct {
		name string
		ctx  context.Context
		opts []inventoryotel.Option
	}{
		{"noop", context.Background(), []inventoryotel.Option{inventoryotel.WithMeterProvider(metricnoop.NewMeterProvider()),
			inventoryotel.WithTracerProvider(tracenoop.NewTracerProvider())}},
		{"sdk", context.Background(), []inventoryotel.Option{inventoryotel.WithMeterProvider(mp), inventoryotel.WithTracerProvider(tp)}},
		{"sdk+span", traced, []inventoryotel.Option{inventoryotel.WithMeterProvider(mp), inventoryotel.WithTracerProvider(tp)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			obs, err := inventoryotel.NewObserver(c.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				obs.ObserveRequest(c.ctx, req)
				obs.ObserveStore(c.ctx, st)
			}
		})
	}
}
