package inventoryotel_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	inventoryotel "github.com/petinventory/petinventory/instrumentation/otel"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The application chooses the SDK: here a MeterProvider read by hand. With
// no option, NewObserver uses the global providers (otel.SetMeterProvider,
// otel.SetTracerProvider).
func ExampleNewObserver() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	obs, err := inventoryotel.NewObserver(inventoryotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	if err != nil {
		log.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("example-key"), inventory.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := api.Register(mux, "/v1"); err != nil {
		log.Fatal(err)
	}

	req := httptest.NewRequest(http.MethodGet, "/v1/inventory/1", nil) // the item route allows PATCH only
	req.Header.Set("Authorization", "Bearer example-key")
	mux.ServeHTTP(httptest.NewRecorder(), req)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			fmt.Println(m.Name, p.Count, p.Attributes.Encoded(attribute.DefaultEncoder()))
		}
	}
	// Output:
	// http.server.request.duration 1 http.request.method=GET,http.response.status_code=405,http.route=/v1/inventory/{petId},inventory.error_code=method_not_allowed
}
