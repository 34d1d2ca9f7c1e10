package inventoryfiber

import "github.com/gofiber/fiber/v2"

// NewApp returns fiber.New(cfg) with every setting the adapter needs,
// whatever cfg says of them: the one way to build the app that serves the
// API, so that no host copies the list and none forgets one of it.
//
//   - StreamRequestBody: the update body reaches the API as a stream, and
//     a huge one is refused with the contract's 413 after the API's limit
//     and one byte more, instead of fasthttp buffering it up to BodyLimit
//     and refusing a larger one itself, closing the connection at once.
//   - DisablePreParseMultipartForm: otherwise fasthttp parses a multipart
//     body before any handler and answers a malformed one with its own
//     400, where the contract says 415.
//   - ErrorHandler, when cfg has none: fasthttp answers a request head it
//     cannot parse (a control byte or NUL in a header value, an invalid
//     header name, a bad request line) through Fiber's ErrorHandler with
//     an error that quotes the raw head, Authorization included, and
//     Fiber's default handler sends that text back. A handler of the
//     host's own is kept: it must not send or log err.Error() of a
//     *fiber.Error either (see ErrorHandler).
//   - fasthttp's Server.SecureErrorLogMessage, which fiber.Config cannot
//     set: fasthttp's own error texts and log lines leave the request's
//     bytes out.
//
// The rest of cfg is the host's: timeouts, BodyLimit (the largest body of
// any route of the app), buffer sizes, DisableStartupMessage. Register
// the API on the app, and call ServeOtherMethods on it before serving.
// The conformance suite's check security/malformed-head-no-echo fails an
// app whose answers repeat the key.
func NewApp(cfg fiber.Config) *fiber.App {
	cfg.StreamRequestBody = true
	cfg.DisablePreParseMultipartForm = true
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = ErrorHandler
	}
	app := fiber.New(cfg)
	app.Server().SecureErrorLogMessage = true
	return app
}
