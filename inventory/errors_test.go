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

func TestErrorf(t *testing.T) {
	err := Errorf(CodeInvalidField, "quantity %d is bad", 7)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidField || e.Status() != 400 || e.Message != "quantity 7 is bad" || e.Err != nil {
		t.Errorf("Errorf = %#v", err)
	}
	if got := err.Error(); got != "invalid_field: quantity 7 is bad" {
		t.Errorf("Error() = %q", got)
	}
	// Errors match by code, through wrapping.
	if !errors.Is(fmt.Errorf("pet 5: %w", Errorf(CodeNotFound, "no pet 5")), ErrNotFound) {
		t.Error("an *Error with code not_found does not match ErrNotFound")
	}
	if errors.Is(ErrNotFound, ErrUnavailable) || errors.Is(errors.New("x"), ErrNotFound) {
		t.Error("errors of other codes match")
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
	if !errors.As(err, &e) || e.Status() != 503 || strings.Contains(e.Message, "10.1.2.3") {
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
		{"ErrNotFound", ErrNotFound, CodeNotFound, 404, false, ErrNotFound.Message},
		{"ErrNotFound wrapped", fmt.Errorf("pet 5: %w", ErrNotFound), CodeNotFound, 404, false, ErrNotFound.Message},
		{"ErrNotFound wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", ErrNotFound)), CodeNotFound, 404, false, ErrNotFound.Message},
		{"backend not_found", Errorf(CodeNotFound, "pet 5 has no entry"), CodeNotFound, 404, false, "pet 5 has no entry"},
		{"not_found built by hand", &Error{Code: CodeNotFound, Message: "pet 5 has no entry"}, CodeNotFound, 404, false, "pet 5 has no entry"},
		{"invalid_field from the service", Errorf(CodeInvalidField, "quantity must be between 0 and %d", MaxQuantity), CodeInvalidField, 400, false, ""},
		{"ErrUnavailable", ErrUnavailable, CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"unavailable with a cause", Unavailable(secretCause), CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"unavailable built by hand", &Error{Code: CodeUnavailable, Message: "redis at 10.1.2.3:6379 is down"}, CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"unavailable wrapped", fmt.Errorf("list: %w", ErrUnavailable), CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"deadline", context.DeadlineExceeded, CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"deadline wrapped", fmt.Errorf("redis: %w", context.DeadlineExceeded), CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"canceled", context.Canceled, CodeUnavailable, 503, false, ErrUnavailable.Message},
		{"unknown error", secretCause, CodeInternal, 500, true, ErrInternal.Message},
		{"ErrInternal", ErrInternal, CodeInternal, 500, true, ErrInternal.Message},
		{"internal with detail", Errorf(CodeInternal, "nil map in %s", "store.go:12"), CodeInternal, 500, true, ErrInternal.Message},
		{"unknown code", &Error{Code: "teapot", Message: "short and stout"}, CodeInternal, 500, true, ErrInternal.Message},
		{"empty code", &Error{Message: "who knows"}, CodeInternal, 500, true, ErrInternal.Message},
		{"a code only the HTTP layer answers", Errorf(CodeMethodNotAllowed, "no"), CodeInternal, 500, true, ErrInternal.Message},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, unexpected := asError(c.err)
			if e.Code != c.code || e.Status() != c.status || unexpected != c.unexpected {
				t.Fatalf("asError(%v) = %s %d unexpected=%v; want %s %d unexpected=%v", c.err, e.Code, e.Status(), unexpected, c.code, c.status, c.unexpected)
			}
			if c.message != "" && e.Message != c.message {
				t.Errorf("message %q; want %q", e.Message, c.message)
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
		{ErrNotFound, `{"code":"not_found","message":"no inventory entry exists for this pet","status":404}`},
		{ErrUnavailable, `{"code":"unavailable","message":"the inventory store is unavailable; retry later","status":503}`},
		{ErrInternal, `{"code":"internal","message":"internal error; the server logged the details","status":500}`},
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
