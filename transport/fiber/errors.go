package inventoryfiber

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// ErrorHandler is a fiber.Config.ErrorHandler that answers an error with
// its status and that status's standard text only, never the error's own
// message: fasthttp answers a request whose head it cannot parse (a
// control byte in a header value, an invalid header name, a bad request
// line) through the ErrorHandler with an error that quotes the raw head,
// its Authorization header included, and Fiber's default ErrorHandler
// sends that text back to the client. The status is the *fiber.Error's
// (400, 408, 413, 431, …), else 500. NewApp gives it to the app, with
// fasthttp's SecureErrorLogMessage for its own log lines.
//
// The API's routes answer their errors themselves (the contract's JSON
// bodies); this handler sees only what reaches Fiber's.
func ErrorHandler(c *fiber.Ctx, err error) error {
	code := fiber.StatusInternalServerError
	var fe *fiber.Error
	if errors.As(err, &fe) {
		code = fe.Code
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Status(code).SendString(utils.StatusMessage(code))
}
