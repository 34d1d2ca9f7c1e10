package inventory

import (
	"github.com/petinventory/petinventory/inventory/internal/wire"

	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestCodeStatus(t *testing.T) {
	want := map[Code]int{
		CodeInvalidPetID: 400, CodeInvalidJSON: 400, CodeMissingField: 400, CodeInvalidField: 400,
		CodeUnknownField: 400, CodeUnauthorized: 401, CodeNotFound: 404, CodeMethodNotAllowed: 405,
		CodePayloadTooLarge: 413, CodeUnsupportedMediaType: 415, CodeInternal: 500, CodeUnavailable: 503,
	}
	for c, s := range want {
		if c.Status() != s {
			t.Errorf("%s: Status() = %d; want %d", c, c.Status(), s)
		}
	}
	for _, c := range []Code{"", "teapot", "Not_Found", "internal "} {
		if c.Status() != 500 {
			t.Errorf("%q: Status() = %d; want 500", c, c.Status())
		}
	}
}

func TestErrorMethods(t *testing.T) {
	err := error(newError(CodeInvalidField, "quantity %d is bad", 7))
	var e *Error
	if !errors.As(err, &e) || e.Code() != CodeInvalidField || e.Status() != 400 || e.Message() != "quantity 7 is bad" || e.Unwrap() != nil {
		t.Errorf("newError = %#v", err)
	}
	if got := err.Error(); got != "invalid_field: quantity 7 is bad" {
		t.Errorf("Error() = %q", got)
	}
	// Errors match by code, through wrapping.
	if !errors.Is(fmt.Errorf("pet 5: %w", newError(CodeNotFound, "no pet 5")), ErrNotFound) {
		t.Error("an *Error with code not_found does not match ErrNotFound")
	}
	if errors.Is(ErrNotFound, ErrUnavailable) || errors.Is(errors.New("x"), ErrNotFound) || errors.Is(newError(CodeInvalidField, "x"), ErrNotFound) {
		t.Error("errors of other codes match")
	}
	// The zero Error, the only one another package can build, says so.
	if got := (&Error{}).Error(); !strings.Contains(got, "no code") {
		t.Errorf("zero Error: Error() = %q", got)
	}
}

// The sentinels cannot be changed through what errors.As gives: it is a
// copy, and the sentinel still says and is answered the same.
func TestSentinelsAreImmutable(t *testing.T) {
	for _, s := range []struct {
		err     error
		code    Code
		message string
	}{
		{ErrNotFound, CodeNotFound, "no inventory entry exists for this pet"},
		{ErrUnavailable, CodeUnavailable, "the inventory store is unavailable; retry later"},
		{ErrUnauthorized, CodeUnauthorized, "the API key is not valid"},
	} {
		var e *Error
		if !errors.As(fmt.Errorf("wrapped: %w", s.err), &e) || e.Code() != s.code || e.Message() != s.message {
			t.Fatalf("errors.As(%v) = %v; want code %s, message %q", s.err, e, s.code, s.message)
		}
		*e = Error{code: CodeInternal, message: "changed"}
		var again *Error
		if !errors.As(s.err, &again) || again.Code() != s.code || again.Message() != s.message {
			t.Errorf("after changing what errors.As gave, %v reads %v", s.err, again)
		}
		if want := string(s.code) + ": " + s.message; s.err.Error() != want {
			t.Errorf("Error() = %q; want %q", s.err.Error(), want)
		}
		if !errors.Is(s.err, s.err) || !errors.Is(&Error{code: s.code}, s.err) {
			t.Errorf("%v does not match itself or an *Error of its code", s.err)
		}
	}
}

// A cause attached with Unavailable is kept for logs and errors.Is, and
// never reaches the message a client reads.
func TestUnavailableKeepsTheCauseFromClients(t *testing.T) {
	cause := errors.New("dial tcp 10.1.2.3:6379: connection refused")
	err := Unavailable(cause)
	if !errors.Is(err, cause) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Unavailable(cause) = %v; want it to match both the cause and ErrUnavailable", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status() != 503 || strings.Contains(e.Message(), "10.1.2.3") {
		t.Fatalf("Unavailable(cause) = %#v; want a 503 whose message does not hold the cause", err)
	}
	r := errorResponse(e)
	defer r.Release()
	if strings.Contains(string(r.Body), "10.1.2.3") {
		t.Errorf("the cause reached the body: %s", r.Body)
	}
}

func TestAsError(t *testing.T) {
	secretCause := errors.New("dial tcp 10.1.2.3:6379: connection refused")
	cases := []struct {
		name       string
		err        error
		code       Code
		status     int
		unexpected bool
		message    string // when set, the exact message the client sees
	}{
		{"ErrNotFound", ErrNotFound, CodeNotFound, 404, false, errNotFound.message},
		{"ErrNotFound wrapped", fmt.Errorf("pet 5: %w", ErrNotFound), CodeNotFound, 404, false, errNotFound.message},
		{"ErrNotFound wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", ErrNotFound)), CodeNotFound, 404, false, errNotFound.message},
		{"not_found of the package", newError(CodeNotFound, "pet 5 has no entry"), CodeNotFound, 404, false, "pet 5 has no entry"},
		{"invalid_field from the service", newError(CodeInvalidField, "quantity must be between 0 and %d", MaxQuantity), CodeInvalidField, 400, false, ""},
		{"ErrUnavailable", ErrUnavailable, CodeUnavailable, 503, false, errUnavailable.message},
		{"unavailable with a cause", Unavailable(secretCause), CodeUnavailable, 503, false, errUnavailable.message},
		{"unavailable with an address in its message", &Error{code: CodeUnavailable, message: "redis at 10.1.2.3:6379 is down"}, CodeUnavailable, 503, false, errUnavailable.message},
		{"unavailable wrapped", fmt.Errorf("list: %w", ErrUnavailable), CodeUnavailable, 503, false, errUnavailable.message},
		{"deadline", context.DeadlineExceeded, CodeUnavailable, 503, false, errUnavailable.message},
		{"deadline wrapped", fmt.Errorf("redis: %w", context.DeadlineExceeded), CodeUnavailable, 503, false, errUnavailable.message},
		{"canceled", context.Canceled, CodeUnavailable, 503, false, errUnavailable.message},
		{"unknown error", secretCause, CodeInternal, 500, true, errInternal.message},
		{"ErrUnauthorized from a store", ErrUnauthorized, CodeInternal, 500, true, errInternal.message},
		{"internal with detail", newError(CodeInternal, "nil map in %s", "store.go:12"), CodeInternal, 500, true, errInternal.message},
		{"unknown code", &Error{code: "teapot", message: "short and stout"}, CodeInternal, 500, true, errInternal.message},
		{"the zero Error", &Error{}, CodeInternal, 500, true, errInternal.message},
		{"a code only the HTTP layer answers", newError(CodeMethodNotAllowed, "no"), CodeInternal, 500, true, errInternal.message},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, unexpected := asError(c.err)
			if e.code != c.code || e.Status() != c.status || unexpected != c.unexpected {
				t.Fatalf("asError(%v) = %s %d unexpected=%v; want %s %d unexpected=%v", c.err, e.code, e.Status(), unexpected, c.code, c.status, c.unexpected)
			}
			if c.message != "" && e.message != c.message {
				t.Errorf("message %q; want %q", e.message, c.message)
			}
			r := errorResponse(e)
			defer r.Release()
			if r.Status != c.status || strings.Contains(string(r.Body), "10.1.2.3") {
				t.Errorf("response %d %s", r.Status, r.Body)
			}
			retryAfter := ""
			r.VisitHeaders(func(name, value string) {
				if name == wire.HeaderRetryAfter {
					retryAfter = value
				}
			})
			if (c.status == http.StatusServiceUnavailable) != (retryAfter == "1") {
				t.Errorf("status %d with Retry-After %q", c.status, retryAfter)
			}
		})
	}
}

func TestErrorResponseBody(t *testing.T) {
	cases := []struct {
		err  *Error
		want string
	}{
		{errNotFound, `{"code":"not_found","message":"no inventory entry exists for this pet","status":404}`},
		{errUnavailable, `{"code":"unavailable","message":"the inventory store is unavailable; retry later","status":503}`},
		{errInternal, `{"code":"internal","message":"internal error; the server logged the details","status":500}`},
		{newError(CodeUnknownField, `unknown member "a\"b<\n>" here`), `{"code":"unknown_field","message":"unknown member \"a\\\"b<\\n>\" here","status":400}`},
		{newError(CodeInvalidPetID, "bad \xff id"), `{"code":"invalid_pet_id","message":"bad \ufffd id","status":400}`},
	}
	for _, c := range cases {
		r := errorResponse(c.err)
		if string(r.Body) != c.want || r.Status != c.err.Status() {
			t.Errorf("errorResponse(%v) = %d %s; want %d %s", c.err, r.Status, r.Body, c.err.Status(), c.want)
		}
		r.Release()
		if r.Body != nil {
			t.Error("Release left the body in place")
		}
		r.Release() // a second Release is harmless
	}
}

// UnavailableBecause's message reaches the client (a 503 naming the fault
// and its fix), wrapped or not; its cause does not.
func TestUnavailableBecauseTellsTheClient(t *testing.T) {
	cause := errors.New("redis 10.1.2.3:6379: no marker")
	err := fmt.Errorf("list: %w", UnavailableBecause("the store is not initialized: initialize it once", cause))
	if !errors.Is(err, cause) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("UnavailableBecause = %v; want it to match both the cause and ErrUnavailable", err)
	}
	e, unexpected := asError(err)
	if unexpected || e.Status() != 503 || e.Message() != "the store is not initialized: initialize it once" {
		t.Fatalf("asError(UnavailableBecause) = %q %d unexpected=%v; want 503 with the message", e.Message(), e.Status(), unexpected)
	}
	r := errorResponse(e)
	defer r.Release()
	if strings.Contains(string(r.Body), "10.1.2.3") || !strings.Contains(string(r.Body), "initialize it once") {
		t.Errorf("body %s: want the message, not the cause", r.Body)
	}
}
