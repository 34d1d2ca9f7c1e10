// Package inventory serves the Pet Store inventory API: list stock
// (GET {prefix}/inventory) and set one pet's stock
// (PATCH {prefix}/inventory/{petId}), with bearer-key authentication.
//
// Every rule of the HTTP contract (docs/CONTRACT.md in the repository) is
// implemented here, once: the check order (route, authentication, petId,
// media type, body size, body, store), the strict JSON body parser, the
// error codes and the response headers. Framework adapters (inventorygin,
// inventoryfiber) only copy requests in and responses out, so the API
// behaves the same on every framework.
//
// The pieces:
//
//   - Item and Status: an inventory entry, as the spec's InventoryItem.
//   - Store: where entries live (memstore, redisstore, or yours); its doc
//     says what each method must return. Service holds the business rules
//     over a Store.
//   - Error, Code and the sentinels ErrNotFound, ErrUnavailable,
//     ErrUnauthorized, ErrInternal: the one error type, matched with
//     errors.Is.
//   - API, built by New with options (WithAPIKeys or WithAuthenticator,
//     WithMaxBodyBytes, WithStoreTimeout, WithLogger): an http.Handler, a
//     ServeMux mount (Register), a route-level entry for net/http routers
//     (ServeRoute), and a framework-neutral one (Serve) for the rest.
//
// New refuses to build an API without keys: the inventory is never served
// open by mistake.
package inventory
