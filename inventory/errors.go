package inventory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Code is the machine-readable code of an Error response. The set is closed:
// every code the API can answer with is one of the constants below.
type Code string

// The error codes of the contract (docs/CONTRACT.md), with the HTTP status
// each one is answered with.
const (
	CodeInvalidPetID         Code = "invalid_pet_id"         // 400
	CodeInvalidJSON          Code = "invalid_json"           // 400
	CodeMissingField         Code = "missing_field"          // 400
	CodeInvalidField         Code = "invalid_field"          // 400
	CodeUnknownField         Code = "unknown_field"          // 400
	CodeUnauthorized         Code = "unauthorized"           // 401
	CodeNotFound             Code = "not_found"              // 404
	CodeMethodNotAllowed     Code = "method_not_allowed"     // 405
	CodePayloadTooLarge      Code = "payload_too_large"      // 413
	CodeUnsupportedMediaType Code = "unsupported_media_type" // 415
	CodeInternal             Code = "internal"               // 500
	CodeUnavailable          Code = "unavailable"            // 503
)

// Status is the HTTP status that answers an error with code c
// (500 for a code outside the contract's set).
func (c Code) Status() int {
	switch c {
	case CodeInvalidPetID, CodeInvalidJSON, CodeMissingField, CodeInvalidField, CodeUnknownField:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Error is the error type of the library and the Error body of the API:
// a Code (from which the HTTP status follows, Code.Status) and a Message.
// Err, when set, is the cause, for logs only.
//
// Clients see Message for 4xx codes. For 500 and 503 they see a generic
// message, so a backend's details (addresses, commands) never reach them;
// build such errors with Unavailable(cause), or return any plain error for
// a 500.
//
// Errors match by code with errors.Is: an *Error with code not_found (or an
// error wrapping one) satisfies errors.Is(err, ErrNotFound).
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Errorf returns an *Error with code c and a message formatted as by
// fmt.Sprintf. The message is what a client reads: it must name what is
// wrong and never carry a secret. There is no %w: a cause's text would
// reach the client; attach causes with Unavailable, or wrap this error with
// fmt.Errorf for logs.
func Errorf(c Code, format string, args ...any) error {
	return newError(c, format, args...)
}

// newError is Errorf with the concrete type, for this package's own use.
func newError(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// Unavailable returns an error with code unavailable that wraps cause: the
// store cannot be reached, timed out, or refuses work for now. The API
// answers it 503 with Retry-After and a generic message; cause is for logs
// only and never reaches a client. Stores use it to translate their own
// transport errors.
func Unavailable(cause error) error {
	return &Error{Code: CodeUnavailable, Message: ErrUnavailable.Message, Err: cause}
}

// Status is the HTTP status the error is answered with: e.Code.Status().
func (e *Error) Status() int { return e.Code.Status() }

func (e *Error) Error() string {
	if e.Err != nil {
		return string(e.Code) + ": " + e.Message + ": " + e.Err.Error()
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is. Stores return (or wrap) ErrNotFound, and
// ErrUnavailable or Unavailable(cause); Authenticators return
// ErrUnauthorized.
var (
	// ErrNotFound: no entry exists for the pet.
	ErrNotFound = &Error{Code: CodeNotFound, Message: "no inventory entry exists for this pet"}
	// ErrUnavailable: the store cannot be reached, timed out, or is
	// temporarily refusing work; the client may retry.
	ErrUnavailable = &Error{Code: CodeUnavailable, Message: "the inventory store is unavailable; retry later"}
	// ErrUnauthorized: an Authenticator rejects the key.
	ErrUnauthorized = &Error{Code: CodeUnauthorized, Message: "the API key is not valid"}
	// ErrInternal: a bug. Its message is the one clients see for any
	// unexpected error.
	ErrInternal = &Error{Code: CodeInternal, Message: "internal error; the server logged the details"}
)

// asError maps any error to the *Error the client is answered with, and
// reports whether it is unexpected (a bug or an unknown failure) and so
// worth logging with detail. This is the one place where errors become
// statuses.
func asError(err error) (e *Error, unexpected bool) {
	var ie *Error
	if errors.As(err, &ie) {
		switch ie.Code {
		case CodeUnavailable:
			// A generic message: the backend's could leak the store's
			// address; the cause is logged.
			return ErrUnavailable, false
		case CodeNotFound, CodeInvalidField:
			// What a store (not found) or the Service (a quantity or item
			// out of range) may answer with. Any other code from below
			// the HTTP layer would come without its headers (Allow,
			// WWW-Authenticate) and is a bug.
		default:
			return ErrInternal, true
		}
		return ie, false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return ErrUnavailable, false
	}
	return ErrInternal, true
}
