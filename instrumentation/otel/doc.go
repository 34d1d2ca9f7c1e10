// Package inventoryotel reports what the petinventory API does to
// OpenTelemetry: a duration histogram of every request and of every store
// call, and a span per store call under the request's span. It is an
// inventory.Observer, set with inventory.WithObserver:
//
//	obs, err := inventoryotel.NewObserver() // the global MeterProvider and TracerProvider
//	...
//	api, err := inventory.New(store, inventory.WithAPIKeys(key), inventory.WithObserver(obs))
//
// It uses the OpenTelemetry API only: the application chooses the SDK, the
// exporters and the sampler, and with none installed (the global no-op
// providers) nothing is recorded.
//
// # Metrics
//
//   - http.server.request.duration (histogram, seconds), one point per
//     request, with the HTTP semantic conventions' attributes
//     http.request.method, http.response.status_code and http.route, plus
//     inventory.error_code when the answer is an error. Its count is the
//     request count: the semantic conventions define no separate counter.
//   - inventory.store.operation.duration (histogram, seconds), one point
//     per store call, with inventory.store.operation (list, set_quantity)
//     and inventory.store.outcome (ok, not_found, unavailable, internal).
//   - inventory.lists.stale (counter, {list}) and inventory.list.stale.age
//     (gauge, seconds): the lists answered from the last state the store
//     confirmed because the store was unavailable
//     (inventory.WithStaleIfError), and the age of the state the last one
//     showed. Nothing is recorded for them without that option.
//
// Every attribute has few values, so that no metric grows without bound:
// a method outside the HTTP methods the semantic conventions list (a 405
// may carry any token) is reported as "_OTHER" (see Method), and
// http.route is the route template ("/v1/inventory/{petId}"), never the
// path.
//
// # Traces
//
// The request's server span comes from the framework's own instrumentation
// (otelhttp, otelgin, otelfiber), which runs before the API. The Observer
// adds to it the inventory.error_code attribute (and an error status for a
// 5xx), inventory.list.stale (true) and inventory.list.age (seconds) on a
// list answered stale, and records each store call as a child span named
// "inventory.store.list" or "inventory.store.set_quantity", with the store
// call's own start and end times and its outcome; a store call that failed
// (unavailable, internal) has an error status and its error recorded. A
// Redis client instrumented with redisotel adds its command spans beside
// it, under the same server span.
//
// Store spans are made only under a recording span: a store call is a part
// of a request, and with no traced request (no server instrumentation, or
// a request not sampled) it has nothing to belong to. That also makes the
// Observer cost nothing for traces when tracing is off.
//
// # Secrets
//
// The Observer sees no key, header or body (inventory.RequestObservation
// holds none), so no attribute it sets can hold the API key or the
// Authorization header.
package inventoryotel
