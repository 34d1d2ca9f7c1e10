// Package server is the inventory server that operators run: the API under
// /v1 on a Redis store (one node, Cluster or Sentinel, over TLS with a
// private CA, client certificates, rotating password and API key files),
// with Gin or Fiber, health and readiness probes, Prometheus metrics,
// OpenTelemetry traces, structured logs and a graceful shutdown. Its
// command is inventory-server:
//
//	go install github.com/petinventory/petinventory/server/cmd/inventory-server@latest
//	REDIS_URL=redis://127.0.0.1:6379/0 INVENTORY_API_KEYS=$(openssl rand -hex 32) inventory-server -framework fiber
//
// Config holds every setting, with its default in its comment; Parse reads
// them from flags and environment variables (one table gives both, and
// -h); Run serves until its context is done. docs/OPERATING.md lists the
// settings and the exit statuses.
//
// Routes: GET /v1/inventory, PATCH /v1/inventory/{petId}, GET /healthz (the
// process is alive), GET /readyz (the store is initialized and can serve:
// see redisstore.Store.Ready), GET /openapi.yaml, GET
// /metrics (Prometheus, on the API's address or Config.MetricsAddr, with
// inventory_build_info; traces over OTLP when an OTLP endpoint is set:
// docs/OBSERVABILITY.md). -version prints BuildInfo.
//
// REDIS_URL and an API key are required: without them Run returns a
// ConfigError (exit status 2) and never makes up a key. The server listens
// first, then, in the background (storeBoot), initializes the store when
// Config.Seed says what with (a file, the demo inventory, or no pets), and
// waits until the store is ready: until then /v1 answers 503 unavailable
// with Retry-After and /readyz 503 with the cause. It serves only an
// initialized store (redisstore.WithRequireInitialized): a store is
// initialized once, only when it has no initialization marker (atomically,
// so replicas starting together seed once), so a restart never overwrites
// real stock; a store never initialized, or wiped under the server, is not
// ready and answers 503 naming the fix, and nothing re-seeds it on its
// own. The steps of a run are the methods of lifecycle.
package server
