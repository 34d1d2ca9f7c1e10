package inventory

import (
	"context"
	"crypto/sha256"
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

// keySet is the Authenticator of WithAPIKeys. It holds digests, not keys,
// and compares a presented key with every configured one in constant time,
// so neither a key's content, its length nor which key matched shows in the
// time taken.
type keySet struct {
	digests [][sha256.Size]byte
}

// NewKeyAuthenticator returns the Authenticator that WithAPIKeys uses: it
// accepts exactly the given keys. It fails when there is no key, or when a
// key is empty or holds spaces or non-printable characters (the error names
// the key's position, never the key).
func NewKeyAuthenticator(keys ...string) (Authenticator, error) {
	if len(keys) == 0 {
		return nil, errors.New("no API key given")
	}
	ks := &keySet{digests: make([][sha256.Size]byte, len(keys))}
	for i, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("API key #%d (of %d) %v", i+1, len(keys), err)
		}
		ks.digests[i] = sha256.Sum256([]byte(k))
	}
	return ks, nil
}

func checkKey(k string) error {
	if k == "" {
		return errors.New("is empty")
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] >= 0x7f {
			return fmt.Errorf("has a space or a non-printable or non-ASCII byte at position %d", i+1)
		}
	}
	return nil
}

func (ks *keySet) Authenticate(_ context.Context, key string) error {
	d := sha256.Sum256([]byte(key))
	match := 0
	for i := range ks.digests {
		match |= subtle.ConstantTimeCompare(d[:], ks.digests[i][:])
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
