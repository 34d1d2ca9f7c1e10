package inventoryotel

// Version is the version of this module, without the leading "v": the
// instrumentation scope's version of the meter and tracer, so that a
// backend can tell which release recorded a metric or a span. It is the
// module set's version in versions.yaml (a test keeps them equal).
func Version() string { return "0.1.0" }
