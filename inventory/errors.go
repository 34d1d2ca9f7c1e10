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
// Code, Message and the HTTP Status it is answered with. Err, when set, is
// the cause, for logs. Clients see Message for 4xx codes; for 500 and 503
// they see a generic message, so a backend's details (addresses, commands)
// never reach them. Errorf puts a %w operand's text into Message: use it
// for client-facing causes only.
//
// Errors match by code with errors.Is, so a backend's
// &Error{Code: CodeNotFound, ...} (or one wrapping it) satisfies
// errors.Is(err, ErrNotFound).
type Error struct {
	Code    Code
	Message string
	Status  int
	Err     error
}

// Errorf returns an *Error with code c, the status that goes with it, and a
// message formatted as by fmt.Sprintf. A %w verb in format sets Err.
func Errorf(c Code, format string, args ...any) *Error {
	wrapped := fmt.Errorf(format, args...)
	e := &Error{Code: c, Message: wrapped.Error(), Status: c.Status()}
	if u := errors.Unwrap(wrapped); u != nil {
		e.Err = u
	}
	return e
}

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

// Sentinels for errors.Is. Backends return (or wrap) these, or an *Error of
// the same code with a more precise message.
var (
	// ErrNotFound: no entry exists for the pet.
	ErrNotFound = &Error{Code: CodeNotFound, Message: "no inventory entry exists for this pet", Status: http.StatusNotFound}
	// ErrUnavailable: the store cannot be reached, timed out, or is
	// temporarily refusing work; the client may retry.
	ErrUnavailable = &Error{Code: CodeUnavailable, Message: "the inventory store is unavailable; retry later", Status: http.StatusServiceUnavailable}
	// ErrUnauthorized: an Authenticator rejects the key.
	ErrUnauthorized = &Error{Code: CodeUnauthorized, Message: "the API key is not valid", Status: http.StatusUnauthorized}
	// ErrInternal: a bug. Its message is the one clients see for any
	// unexpected error.
	ErrInternal = &Error{Code: CodeInternal, Message: "internal error; the server logged the details", Status: http.StatusInternalServerError}
)

// Unavailable returns an error with code unavailable that wraps cause: the
// store cannot be reached, timed out, or refuses work for now. The API
// answers it 503 with Retry-After and a generic message; cause is for logs
// only and never reaches a client. Stores use it to translate their own
// transport errors.
func Unavailable(cause error) error {
	return &Error{Code: CodeUnavailable, Message: ErrUnavailable.Message, Status: http.StatusServiceUnavailable, Err: cause}
}

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
		switch ie.Status {
		case ie.Code.Status():
			return ie, false
		case 0:
			// &Error{Code: CodeNotFound, Message: ...}, as the Error doc
			// shows a backend building it, leaves the status to the code.
			withStatus := *ie
			withStatus.Status = ie.Code.Status()
			return &withStatus, false
		}
		// A status that does not go with the code is a bug in whoever
		// built the Error.
		return ErrInternal, true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return ErrUnavailable, false
	}
	return ErrInternal, true
}
