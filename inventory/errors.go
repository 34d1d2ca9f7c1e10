package inventory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
	CodeRequestTimeout       Code = "request_timeout"        // 408
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
	case CodeRequestTimeout:
		return http.StatusRequestTimeout
	case CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Error is an error of the library and the Error body of the API: a Code
// (from which the HTTP status follows, Code.Status) and a Message. Only
// this package builds them; read one with errors.As and its methods.
//
// What a client reads follows from where the error comes from:
//
//   - the API's own checks (route, authentication, petId, media type, body)
//     and Service (a quantity or an item out of range) answer with their
//     code and Message;
//   - a Store answers with ErrNotFound (or an error wrapping it) where its
//     method's doc allows it, a 404; with ErrUnavailable, Unavailable(cause)
//     or a done context's error when it cannot serve now, a 503 with a
//     generic message; any other error is a 500 with a generic message,
//     logged with its detail, so a backend's details (addresses, commands)
//     never reach a client;
//   - an Authenticator answers with ErrUnauthorized (401) or an error
//     matching ErrUnavailable (503); any other error is a 500.
//
// Errors match by code with errors.Is: an *Error with code not_found, or
// an error wrapping one, satisfies errors.Is(err, ErrNotFound).
type Error struct {
	code    Code
	message string
	err     error
	told    bool // an unavailable error whose message is the client's (UnavailableBecause)
}

// newError returns an *Error with code c and a message formatted as by
// fmt.Sprintf: what a client reads, naming what is wrong and never
// carrying a secret.
func newError(c Code, format string, args ...any) *Error {
	return &Error{code: c, message: fmt.Sprintf(format, args...)}
}

// Unavailable returns an error with code unavailable that wraps cause: the
// store cannot be reached, timed out, or refuses work for now. The API
// answers it 503 with Retry-After and a generic message; cause is for logs
// and errors.Is only and never reaches a client. Stores use it to
// translate their own transport errors.
func Unavailable(cause error) error {
	return &Error{code: CodeUnavailable, message: errUnavailable.message, err: cause}
}

// UnavailableBecause returns an error with code unavailable, as
// Unavailable does, whose message the client reads: a fault that does not
// pass by itself and that an operator must fix (the store was never
// initialized, or was wiped), named with the step that fixes it. The API
// answers it 503 with Retry-After, as any unavailable error. message must
// hold no secret (no address, no credential); cause is for logs and
// errors.Is only.
//
// Such an error says the inventory itself is gone or never was, not that
// the store is out of reach for now: a list that meets it is never
// answered from a state the API holds (WithStaleIfError), and neither is
// any list after a store read met it, until a store read succeeds.
func UnavailableBecause(message string, cause error) error {
	return &Error{code: CodeUnavailable, message: message, err: cause, told: true}
}

// outage reports whether err is an outage of the store, which a list may
// be answered stale through (WithStaleIfError): an error answered 503
// (asError) that is not, and does not wrap, UnavailableBecause's fault of
// the inventory itself, which no list ever is. It returns the outage's
// cause for the log: what the store said, without the generic message.
func outage(err error) (cause string, ok bool) {
	if e, _ := asError(err); e.code != CodeUnavailable || vanished(err) {
		return "", false
	}
	var ie *Error
	switch {
	case !errors.As(err, &ie):
		return err.Error(), true // a done context's error
	case ie.err != nil:
		return ie.err.Error(), true
	}
	return ie.message, true
}

// vanished reports whether err is, or wraps, an error of
// UnavailableBecause: a fault of the inventory itself (a store never
// initialized, or wiped). Every error of the chain is looked at, not only
// the first *Error: a store may wrap the fault in an Unavailable of its
// own.
func vanished(err error) bool {
	for err != nil {
		if ie, ok := err.(*Error); ok && ie.told {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			return slices.ContainsFunc(u.Unwrap(), vanished)
		default:
			return false
		}
	}
	return false
}

// Code is the error's code, one of the Code constants.
func (e *Error) Code() Code { return e.code }

// Message is the text a client reads in the Error body.
func (e *Error) Message() string { return e.message }

// Status is the HTTP status the error is answered with: e.Code().Status().
func (e *Error) Status() int { return e.code.Status() }

func (e *Error) Error() string {
	s := string(e.code) + ": " + e.message
	if e.code == "" {
		s = "inventory: an Error with no code (only package inventory builds them)"
	}
	if e.err != nil {
		return s + ": " + e.err.Error()
	}
	return s
}

// Unwrap returns the cause (Unavailable's), or nil.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether target is one of the sentinels below, or an *Error,
// with the same code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case sentinel:
		return t.e.code == e.code
	case *Error:
		return t.code == e.code
	}
	return false
}

// Sentinels for errors.Is. Stores return (or wrap) ErrNotFound and
// ErrUnavailable, or use Unavailable(cause); Authenticators return
// ErrUnauthorized. They are values of an unexported type, so nothing can
// change what they say.
var (
	// ErrNotFound: no entry exists for the pet.
	ErrNotFound error = sentinel{errNotFound}
	// ErrUnavailable: the store cannot be reached, timed out, or is
	// temporarily refusing work; the client may retry.
	ErrUnavailable error = sentinel{errUnavailable}
	// ErrUnauthorized: an Authenticator rejects the key.
	ErrUnauthorized error = sentinel{errUnauthorized}
)

// The *Error each sentinel, and any unexpected error, is answered with.
var (
	errNotFound     = &Error{code: CodeNotFound, message: "no inventory entry exists for this pet"}
	errUnavailable  = &Error{code: CodeUnavailable, message: "the inventory store is unavailable; retry later"}
	errUnauthorized = &Error{code: CodeUnauthorized, message: "the API key is not valid"}
	errInternal     = &Error{code: CodeInternal, message: "internal error; the server logged the details"}
)

// sentinel is the type of the exported sentinels: comparable, and holding
// its *Error where no other package can reach it.
type sentinel struct{ e *Error }

func (s sentinel) Error() string { return s.e.Error() }

// As sets a **Error target to a copy of the sentinel's *Error, so that
// errors.As reads every error of the library the same way.
func (s sentinel) As(target any) bool {
	p, ok := target.(**Error)
	if ok {
		c := *s.e
		*p = &c
	}
	return ok
}

// asError maps any error to the *Error the client is answered with, and
// reports whether it is unexpected (a bug or an unknown failure) and so
// worth logging with detail. This is the one place where errors become
// statuses.
func asError(err error) (e *Error, unexpected bool) {
	var ie *Error
	if errors.As(err, &ie) {
		switch ie.code {
		case CodeUnavailable:
			// A generic message: the cause could hold the store's
			// address; it is logged. UnavailableBecause's message is
			// meant for the client.
			if ie.told {
				return ie, false
			}
			return errUnavailable, false
		case CodeNotFound, CodeInvalidField:
			// What a store (not found) or the Service (a quantity or
			// item out of range) may answer with. Any other code from
			// below the HTTP layer would come without its headers
			// (Allow, WWW-Authenticate) and is a bug.
		default:
			return errInternal, true
		}
		return ie, false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errUnavailable, false
	}
	return errInternal, true
}
