package inventoryotel

import (
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the meter and tracer.
const ScopeName = "github.com/petinventory/petinventory/instrumentation/otel"

// DefaultRoutePrefix is the prefix of the http.route attribute when
// WithRoutePrefix is not given: the prefix the contract mounts the API at.
const DefaultRoutePrefix = "/v1"

type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	routePrefix    string
}

// Option configures NewObserver.
//
// It is an interface with an unexported method, where package inventory's
// Option is a func type, on purpose: it follows OpenTelemetry-Go's
// convention (otelhttp.Option, otelgrpc.Option, the SDK's options), which
// is what a reader of this module already knows from the rest of the
// instrumentation they wire up. The shape also keeps the option's
// signature private, so that an option can later apply to more than one
// constructor without a breaking change. Callers see no difference: both
// kinds are built with With… functions and passed as a variadic list.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func newConfig(opts []Option) (config, error) {
	c := config{routePrefix: DefaultRoutePrefix}
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("inventoryotel: NewObserver: option %d is nil", i+1)
		}
		o.apply(&c)
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	return c, nil
}

// WithMeterProvider sets the MeterProvider the metrics are recorded with.
// Default (or nil): the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithTracerProvider sets the TracerProvider the store spans are made
// with. Default (or nil): the global one, otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithRoutePrefix sets the prefix the API is mounted at, for the
// http.route attribute: prefix+"/inventory" and prefix+"/inventory/{petId}".
// Default DefaultRoutePrefix ("/v1"); "" for an API mounted at the root.
func WithRoutePrefix(prefix string) Option {
	return optionFunc(func(c *config) { c.routePrefix = prefix })
}
