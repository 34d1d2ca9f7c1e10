// Package inventory serves the Pet Store inventory API: list stock
// (GET {prefix}/inventory, and HEAD as GET without the body) and set one
// pet's stock (PATCH {prefix}/inventory/{petId}), with bearer-key
// authentication.
//
// Every rule of the HTTP contract (docs/CONTRACT.md in the repository) is
// decided here, once: the check order (route, authentication, petId,
// media type, body size, body, store), what an update body must hold and
// how long it may take to arrive, the error codes and the response
// headers, and the list's gzip negotiation (Accept-Encoding,
// GzipMinBytes) and revalidation (ETag, If-None-Match, 304). Its internal
// packages are engines behind those rules: listbody keeps the list's
// encoded bodies, strictjson validates JSON, wire holds the
// transport-neutral request and answer and the route matcher
// (docs/ARCHITECTURE.md maps every rule to its file). Framework adapters only copy
// requests in and responses out, so the API behaves the same on every
// framework.
//
// # For applications
//
// Build an API over a Store with New and options (WithAPIKeys or
// WithAuthenticator, WithMaxBodyBytes, WithBodyTimeout, WithStoreTimeout,
// WithMaxStaleness, WithStaleIfError, WithLogger, WithObserver), then
// mount it:
//
//   - net/http: the API is an http.Handler (under http.StripPrefix);
//     API.Register mounts it on a ServeMux; API.Middleware mounts it on
//     any router with middleware that runs before routing (chi, echo).
//     Each hands the API everything at and below {prefix}/inventory,
//     whatever the method, so the router never answers for it.
//   - Gin: package inventorygin (module transport/gin).
//   - Fiber: package inventoryfiber (module transport/fiber).
//
// New refuses to build an API without keys: the inventory is never served
// open by mistake. Stores: storage/memory (memstore) and storage/redis
// (redisstore). Seed and administer a store through its Service
// (API.Service, NewService), which checks what is written as the API
// does.
//
// Errors are *Error values with a Code; the HTTP status follows from the
// code. Match them with errors.Is against ErrNotFound, ErrUnavailable and
// ErrUnauthorized, or read the code with errors.As and Error.Code.
//
// # For store authors
//
// Implement Store (and, optionally, ChangeLister, so that a list costs what
// changed rather than the whole inventory, and Seeder for atomic seeding);
// each method's doc says what it must return.
// Translate your own transport errors with Unavailable(cause). Package
// inventory/storetest checks an implementation against the contract.
//
// # For adapter authors
//
// Frameworks not built on net/http serve the API through package
// inventory/adapter.
//
// # Observing
//
// WithObserver sets an Observer told about every request (route, method,
// status, error code, duration, and whether a list was answered stale)
// and every store call (operation, outcome,
// duration). It is an option of New, not a Store wrapper, because only the
// API knows a request's route, status and code, and the outcome it
// answered a store error with; a Store wrapper may still add its own.
// Module instrumentation/otel provides an Observer for OpenTelemetry.
package inventory
