package inventory

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
)

// Authenticator decides whether a bearer key is valid. Authenticate returns
// nil to accept the key, an error matching ErrUnauthorized to reject it, and
// any other error when it cannot decide (an error matching ErrUnavailable is
// answered 503, anything else 500). It must not log the key.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) error
}

// AuthenticatorFunc adapts a function to an Authenticator.
type AuthenticatorFunc func(ctx context.Context, key string) error

// Authenticate calls f(ctx, key).
func (f AuthenticatorFunc) Authenticate(ctx context.Context, key string) error { return f(ctx, key) }

// keySet is the Authenticator of WithAPIKeys. Every configured key is
// padded with zeros to the width of the longest; a presented key is padded
// (or cut) to that width too, and compared with every configured key over
// the whole width, its length compared alongside. So the time taken
// depends on neither the presented nor a configured key's content or
// length, nor on which key matched: only on the width and the number of
// keys, which are configuration.
//
// (Comparing SHA-256 digests gives the same guarantee at five times the
// cost on the hot path of every request; see BENCHMARKS.md.)
type keySet struct {
	width int
	keys  []paddedKey
}

type paddedKey struct {
	b []byte // the key, zero-padded to width
	n int    // the key's length
}

// maxKeyLen bounds a configured key, so that the padding stays small.
const maxKeyLen = 512

// NewKeyAuthenticator returns the Authenticator that WithAPIKeys uses: it
// accepts exactly the given keys. It fails when there is no key, or when a
// key is empty, longer than 512 bytes, or holds spaces or non-printable
// characters (the error names the key's position, never the key).
func NewKeyAuthenticator(keys ...string) (Authenticator, error) {
	if len(keys) == 0 {
		return nil, errors.New("no API key given")
	}
	ks := &keySet{keys: make([]paddedKey, len(keys))}
	for i, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("API key #%d (of %d) %v", i+1, len(keys), err)
		}
		ks.width = max(ks.width, len(k))
	}
	for i, k := range keys {
		b := make([]byte, ks.width)
		copy(b, k)
		ks.keys[i] = paddedKey{b: b, n: len(k)}
	}
	return ks, nil
}

func checkKey(k string) error {
	if k == "" {
		return errors.New("is empty")
	}
	if len(k) > maxKeyLen {
		return fmt.Errorf("is longer than %d bytes", maxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] >= 0x7f {
			return fmt.Errorf("has a space or a non-printable or non-ASCII byte at position %d", i+1)
		}
	}
	return nil
}

func (ks *keySet) Authenticate(_ context.Context, key string) error {
	var stack [128]byte
	var buf []byte
	if ks.width <= len(stack) {
		buf = stack[:ks.width]
	} else {
		buf = make([]byte, ks.width)
	}
	copy(buf, key) // a longer key is cut; its length then matches no key's
	n := int32(min(len(key), maxKeyLen+1))
	match := 0
	for _, k := range ks.keys {
		match |= subtle.ConstantTimeCompare(buf, k.b) & subtle.ConstantTimeEq(n, int32(k.n))
	}
	if match == 1 {
		return nil
	}
	return ErrUnauthorized
}

// The WWW-Authenticate values of RFC 6750: without an error when the client
// sent no bearer credentials, with invalid_token when it sent a wrong one.
const (
	challengeNoCredentials = `Bearer realm="inventory"`
	challengeInvalidToken  = `Bearer realm="inventory", error="invalid_token"`
)

// bearerKey extracts the key from an Authorization header value. sent
// reports whether the client sent Bearer credentials at all. Nothing of the
// header value is ever put into an error message: a client that sends its
// key without a scheme would otherwise see it echoed.
func bearerKey(h string) (key string, sent bool, msg string) {
	if h == "" {
		return "", false, "missing Authorization header; send 'Authorization: Bearer <API key>'"
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, "the Authorization header does not use the Bearer scheme; send 'Authorization: Bearer <API key>'"
	}
	key = strings.TrimLeft(rest, " ")
	if key == "" {
		return "", true, "the Authorization header has the Bearer scheme but no key"
	}
	return key, true, ""
}
