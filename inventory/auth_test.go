package inventory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestBearerKey(t *testing.T) {
	cases := []struct {
		header string
		key    string
		sent   bool // Bearer credentials were sent
		fails  bool // a message is returned
	}{
		{"Bearer k1", "k1", true, false},
		{"bearer k1", "k1", true, false},
		{"BEARER k1", "k1", true, false},
		{"bEaReR k1", "k1", true, false},
		{"Bearer    k1", "k1", true, false},
		{"Bearer k1 ", "k1 ", true, false}, // the authenticator rejects it
		{"Bearer k1 k2", "k1 k2", true, false},
		{"Bearer a==", "a==", true, false},
		{"Bearer", "", true, true},
		{"Bearer ", "", true, true},
		{"Bearer     ", "", true, true},
		{"", "", false, true},
		{"Basic dXNlcjpwYXNz", "", false, true},
		{"k1", "", false, true}, // a bare key: no scheme
		{"Bearerk1", "", false, true},
		{"Bearer\tk1", "", false, true}, // RFC 7235 separates with SP only
		{" Bearer k1", "", false, true},
		{"Bearer-Token k1", "", false, true},
		{"Bеarer k1", "", false, true}, // Cyrillic е
	}
	for _, c := range cases {
		key, sent, msg := bearerKey(c.header)
		if key != c.key || sent != c.sent || (msg != "") != c.fails {
			t.Errorf("bearerKey(%q) = %q, %v, %q; want %q, %v, fails=%v", c.header, key, sent, msg, c.key, c.sent, c.fails)
		}
		if strings.TrimSpace(c.header) != "Bearer" && c.header != "" && strings.Contains(msg, c.header) {
			t.Errorf("bearerKey(%q): the message repeats the header: %q", c.header, msg)
		}
	}
}

func TestNewKeyAuthenticator(t *testing.T) {
	ctx := context.Background()
	a, err := NewKeyAuthenticator("old-key", "new-key", "third~KEY!")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old-key", "new-key", "third~KEY!"} {
		if err := a.Authenticate(ctx, k); err != nil {
			t.Errorf("key %q rejected: %v", k, err)
		}
	}
	for _, k := range []string{"", "old-ke", "old-key ", "OLD-KEY", "new-keyx", "third~KEY", "old-keynew-key"} {
		if err := a.Authenticate(ctx, k); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("key %q: %v; want ErrUnauthorized", k, err)
		}
	}
	// Rotation: a set without the old key refuses it.
	b, err := NewKeyAuthenticator("new-key")
	if err != nil {
		t.Fatal(err)
	}
	if b.Authenticate(ctx, "old-key") == nil || b.Authenticate(ctx, "new-key") != nil {
		t.Error("the rotated set does not hold exactly the new key")
	}
	// Keys are padded to a common width: a key's zero padding, a prefix of
	// it, or a longer key that starts with it must not pass for it.
	for _, k := range []string{"old-key\x00", "old-key\x00\x00\x00", "third~KEY!\x00", "third~KEY!-and-more-than-the-width", "\x00\x00\x00\x00\x00\x00\x00"} {
		if err := a.Authenticate(ctx, k); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("key %q: %v; want ErrUnauthorized", k, err)
		}
	}
	// Keys wider than the stack buffer take the other path.
	long := strings.Repeat("k", 300)
	c, err := NewKeyAuthenticator("short", long)
	if err != nil {
		t.Fatal(err)
	}
	if c.Authenticate(ctx, long) != nil || c.Authenticate(ctx, "short") != nil {
		t.Error("a 300-byte key set refuses one of its keys")
	}
	if c.Authenticate(ctx, long[:299]) == nil || c.Authenticate(ctx, long+"k") == nil || c.Authenticate(ctx, strings.Repeat("k", 5000)) == nil {
		t.Error("a 300-byte key set accepts a key it does not hold")
	}
}

func TestNewKeyAuthenticatorRejects(t *testing.T) {
	cases := []struct {
		keys []string
		want string // in the error
	}{
		{nil, "no API key"},
		{[]string{}, "no API key"},
		{[]string{""}, "#1 (of 1) is empty"},
		{[]string{"ok", strings.Repeat("x", 513)}, "#2 (of 2) is longer than 512 bytes"},
		{[]string{"good-key", "secret with space"}, "#2 (of 2)"},
		{[]string{"tab\tsecret"}, "position 4"},
		{[]string{"newline-secret\n"}, "#1"},
		{[]string{"nul\x00secret"}, "#1"},
		{[]string{"del\x7fsecret"}, "#1"},
		{[]string{"ok", "ok2", "sécret"}, "#3 (of 3)"},
		{[]string{"\xffsecret"}, "position 1"},
	}
	for _, c := range cases {
		a, err := NewKeyAuthenticator(c.keys...)
		if err == nil || a != nil {
			t.Errorf("NewKeyAuthenticator(%q) = %v, %v; want an error", c.keys, a, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewKeyAuthenticator(%q): %q; want it to contain %q", c.keys, err, c.want)
		}
		for _, k := range c.keys {
			if len(k) >= 3 && strings.Contains(err.Error(), k) || strings.Contains(err.Error(), "secret") {
				t.Errorf("NewKeyAuthenticator(%q): the error shows a key: %q", c.keys, err)
			}
		}
	}
}

func TestCheckMediaType(t *testing.T) {
	accepted := []string{
		"", "application/json", "application/merge-patch+json", "Application/JSON",
		"application/json; charset=utf-8", "application/json;charset=UTF-8", `application/json; charset="utf-8"`,
		"application/merge-patch+json; charset=utf-8", "application/json; foo=bar", "application/json ; q=1",
	}
	for _, ct := range accepted {
		if err := checkMediaType(ct); err != nil {
			t.Errorf("checkMediaType(%q) = %v; want nil", ct, err)
		}
	}
	rejected := map[string]string{
		"text/plain":                                      `"text/plain"`,
		"application/x-www-form-urlencoded":               "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x":                 "multipart/form-data",
		"application/json-patch+json":                     "json-patch",
		"application/jsonx":                               "jsonx",
		"application/json; charset=latin1":                `charset "latin1"`,
		"application/json; charset=utf-16":                "utf-16",
		"application/json; charset=utf8":                  "utf8",
		"application/json; charset=":                      "could not be parsed",
		"application/json; charset=utf-8; charset=latin1": "could not be parsed",
		"application/":                                    "could not be parsed",
		"/json":                                           "could not be parsed",
		"json":                                            `"json"`,
		";charset=utf-8":                                  "could not be parsed",
		"application/" + strings.Repeat("x", 200):         "…",
	}
	for ct, want := range rejected {
		err := checkMediaType(ct)
		if err == nil || err.code != CodeUnsupportedMediaType || err.Status() != 415 {
			t.Errorf("checkMediaType(%q) = %v; want unsupported_media_type", ct, err)
			continue
		}
		if !strings.Contains(err.message, want) || len(err.message) > 200 {
			t.Errorf("checkMediaType(%q): message %q; want it to contain %q and be short", ct, err.message, want)
		}
	}
}

func TestParsePetIDTable(t *testing.T) {
	valid := map[string]int64{
		"1": 1, "007": 7, "+5": 5, "-5": -5, "0": 0, "-0": 0,
		"9223372036854775807": 9223372036854775807, "-9223372036854775808": -9223372036854775808,
	}
	for s, want := range valid {
		if got, err := parsePetID(s); err != nil || got != want {
			t.Errorf("parsePetID(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	invalid := map[string]string{
		"":                         "empty",
		"abc":                      `"abc" is not`,
		"1.5":                      "not a base-10",
		"1e3":                      "not a base-10",
		" 1":                       "not a base-10",
		"1_000":                    "not a base-10",
		"0x10":                     "not a base-10",
		"+":                        "not a base-10",
		"9223372036854775808":      "outside the 64-bit",
		"-9223372036854775809":     "outside the 64-bit",
		strings.Repeat("9", 10000): "…",
	}
	for s, want := range invalid {
		_, err := parsePetID(s)
		if err == nil || err.code != CodeInvalidPetID || err.Status() != 400 {
			t.Errorf("parsePetID(%.40q) = %v; want invalid_pet_id", s, err)
			continue
		}
		if !strings.Contains(err.message, want) || len(err.message) > 120 {
			t.Errorf("parsePetID(%.40q): message %q; want it short and containing %q", s, err.message, want)
		}
	}
}
