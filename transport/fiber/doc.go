// Package inventoryfiber mounts the petinventory API on a Fiber (v2) router.
//
// It is an adapter and nothing more: it copies each request into an
// adapter.Request (package inventory/adapter), calls adapter.Serve, and
// copies the answer back.
// Every rule of the contract (authentication, validation, status codes,
// headers) is applied there. Mount it on the app or on a group:
//
//	api, err := inventory.New(store, inventory.WithAPIKeys(key))
//	...
//	if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil { ... }
//
// Build the app with NewApp, which takes the host's fiber.Config
// (timeouts, BodyLimit, which bounds every route of the app):
//
//	app := inventoryfiber.NewApp(fiber.Config{BodyLimit: 4 << 20})
//
// It sets over the host's config what acts before any handler runs:
//
//   - StreamRequestBody. The update body then reaches the API as a
//     stream, a huge one is refused with the contract's 413 after the
//     API's limit (16 KiB by default) + 1 byte, and its rest is read and
//     discarded before the connection is closed, so that the client reads
//     the answer. Without it, fasthttp reads every body into memory up to
//     BodyLimit (4 MiB by default), and answers a larger one itself:
//     Fiber's ErrorHandler with fiber.ErrRequestEntityTooLarge (by
//     default a plain-text 413), and the connection is closed at once,
//     which a client still sending may see as a reset.
//   - DisablePreParseMultipartForm, or fasthttp answers a malformed
//     multipart body with its own 400 before the API can answer 415.
//   - ErrorHandler and fasthttp's SecureErrorLogMessage (below).
//
// Fiber answers a method outside fiber.Config.RequestMethods (default
// fiber.DefaultMethods), or in lowercase, with its own 400 "Invalid http
// method" before any handler runs, and fasthttp reads a body (its first
// 8 KiB when streamed) before any handler too, answering one that stalls
// with fiber's plain-text 408; ServeOtherMethods lets the API answer
// both on its paths, with the contract's 405 and Allow, and its 408
// request_timeout within the API's body timeout:
//
//	if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil { ... }
//
// fasthttp answers a request head it cannot parse (a control byte in a
// header value, a bad request line) through Fiber's ErrorHandler with an
// error that quotes the raw head, the Authorization header included, and
// Fiber's default ErrorHandler sends that text back: NewApp gives the app
// ErrorHandler, which answers the status text alone, unless the host has
// its own, and turns on fasthttp's SecureErrorLogMessage.
package inventoryfiber
