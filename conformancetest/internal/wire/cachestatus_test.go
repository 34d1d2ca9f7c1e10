package wire

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCacheStatus: Cache-Status is read as RFC 9211's structured list,
// the deployment's member found by its name among others, and its stale
// mark by its fwd parameter; malformed lists are errors that say where.
func TestCacheStatus(t *testing.T) {
	for _, tc := range []struct {
		fields []string
		stale  bool
		err    string // a word of the error; "" for none
	}{
		{nil, false, ""},
		{[]string{"petinventory; fwd=stale; fwd-status=503"}, true, ""},
		{[]string{`ExampleCDN; hit; detail="from \"the\" edge", petinventory; fwd=stale; fwd-status=503`}, true, ""},
		{[]string{"ExampleCDN; fwd=uri-miss", "petinventory;fwd=stale"}, true, ""}, // two fields are one list
		{[]string{`"petinventory"; fwd=stale`}, true, ""},                          // a name as a string
		{[]string{"petinventory; fwd=miss"}, false, ""},
		{[]string{"petinventory; fwd=\"stale\""}, true, ""}, // the value as a string is the same value
		{[]string{"other; fwd=stale"}, false, ""},
		{[]string{"petinventory; hit; ttl=-3; stored; key=:cGV0:; x=1.5"}, false, ""},
		{[]string{"petinventory; fwd=stale,"}, false, "a comma with no member"},
		{[]string{"petinventory fwd=stale"}, false, "want a comma"},
		{[]string{"petinventory; Fwd=stale"}, false, "parameter's key"},
		{[]string{"; fwd=stale"}, false, "cache's name"},
		{[]string{`petinventory; detail="unterminated`}, false, "closing quote"},
		{[]string{"petinventory; ttl=1234567890123456"}, false, "15 digits"},
		{[]string{"petinventory; fwd=?2"}, false, "boolean"},
	} {
		h := http.Header{}
		for _, f := range tc.fields {
			h.Add("Cache-Status", f)
		}
		stale, err := StaleMark(h)
		switch {
		case tc.err == "" && (err != nil || stale != tc.stale):
			t.Errorf("%q: stale %v, %v; want %v", tc.fields, stale, err, tc.stale)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v, want an error saying %q", tc.fields, err, tc.err)
		}
	}
}

// TestAge: Age is one whole number of seconds.
func TestAge(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   int64
		ok     bool
	}{
		{[]string{"0"}, 0, true},
		{[]string{" 29 "}, 29, true},
		{nil, 0, false},
		{[]string{"-1"}, 0, false},
		{[]string{"1.5"}, 0, false},
		{[]string{"+3"}, 0, false},
		{[]string{"3", "4"}, 0, false},
		{[]string{"99999999999999999999"}, 0, false},
	} {
		h := http.Header{}
		for _, v := range tc.values {
			h.Add("Age", v)
		}
		got, err := Age(h)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Age %q: %d, %v", tc.values, got, err)
		}
	}
}

// TestRetryAfter: Retry-After in seconds is read; anything else, or no
// answer, is the fallback.
func TestRetryAfter(t *testing.T) {
	fallback := 250 * time.Millisecond
	for _, tc := range []struct {
		ex   *Exchange
		want time.Duration
	}{
		{&Exchange{Resp: &Response{Header: http.Header{"Retry-After": {"2"}}}}, 2 * time.Second},
		{&Exchange{Resp: &Response{Header: http.Header{"Retry-After": {"0"}}}}, 0},
		{&Exchange{Resp: &Response{Header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}}}, fallback},
		{&Exchange{Resp: &Response{Header: http.Header{}}}, fallback},
		{&Exchange{Err: errors.New("cut")}, fallback},
	} {
		if got := RetryAfter(tc.ex, fallback); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.ex, got, tc.want)
		}
	}
}

// TestRetryWait: the wait before a retry is Retry-After, at least
// RetryPause, at most what is left.
func TestRetryWait(t *testing.T) {
	answer := func(retryAfter string) *Exchange {
		return &Exchange{Resp: &Response{Header: http.Header{"Retry-After": {retryAfter}}}}
	}
	for _, tc := range []struct {
		ex   *Exchange
		left time.Duration
		want time.Duration
	}{
		{answer("2"), time.Minute, 2 * time.Second},
		{answer("0"), time.Minute, RetryPause},      // never sooner than the pause
		{answer("a date"), time.Minute, RetryPause}, // unreadable: the pause
		{&Exchange{Err: errors.New("cut")}, time.Minute, RetryPause},
		{answer("30"), 3 * time.Second, 3 * time.Second}, // never past what is left
		{answer("2"), 0, 0},
	} {
		if got := RetryWait(tc.ex, tc.left); got != tc.want {
			t.Errorf("%+v, %v left: %v, want %v", tc.ex, tc.left, got, tc.want)
		}
	}
}
