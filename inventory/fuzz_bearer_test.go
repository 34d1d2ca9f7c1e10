package inventory_test

// FuzzBearer holds the Authorization header's parsing, through the API, to
// an independent oracle (see fuzz_test.go for the parsers' other targets).

import (
	"context"
	"net/http"
	"regexp"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// ---- the Authorization header ----

// bearerSyntax is RFC 7235's credentials = auth-scheme [ 1*SP token ], with
// the scheme matched case-insensitively in ASCII only; the key is all that
// follows the spaces.
var bearerSyntax = regexp.MustCompile(`^(?s)[Bb][Ee][Aa][Rr][Ee][Rr](?: +(.*))?$`)

type authCase int

const (
	authMissing     authCase = iota // no header
	authOtherScheme                 // not Bearer credentials
	authEmptyKey                    // Bearer with no key
	authWrongKey                    // Bearer with a key that is not valid
	authGoodKey
)

const fuzzGoodKey = "s3cret-K3y"

func oracleBearer(h string) (authCase, string) {
	if h == "" {
		return authMissing, ""
	}
	m := bearerSyntax.FindStringSubmatch(h)
	switch {
	case m == nil:
		return authOtherScheme, ""
	case m[1] == "":
		return authEmptyKey, ""
	case m[1] == fuzzGoodKey:
		return authGoodKey, m[1]
	}
	return authWrongKey, m[1]
}

type seenKey struct{}

// keyRecord is where the fuzz Authenticator writes what it was given.
type keyRecord struct {
	calls int
	key   string
}

func FuzzBearer(f *testing.F) {
	for _, s := range []string{
		"", "Bearer " + fuzzGoodKey, "bearer " + fuzzGoodKey, "BEARER   " + fuzzGoodKey, "Bearer",
		"Bearer ", "Bearer  ", "Bearer wrong", "Basic dXNlcjpwYXNz", fuzzGoodKey, "Bearer\t" + fuzzGoodKey,
		" Bearer " + fuzzGoodKey, "Bearer " + fuzzGoodKey + " ", "Bearerx " + fuzzGoodKey, "Bearer a b",
		"Bearer " + fuzzGoodKey + "\n", "B\u0117arer x",
	} {
		f.Add(s)
	}
	store, err := memstore.New()
	if err != nil {
		f.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAuthenticator(inventory.AuthenticatorFunc(
		func(ctx context.Context, key string) error {
			rec := ctx.Value(seenKey{}).(*keyRecord)
			rec.calls++
			rec.key = key
			if key == fuzzGoodKey {
				return nil
			}
			return inventory.ErrUnauthorized
		})))
	if err != nil {
		f.Fatal(err)
	}
	serve := func(h string) (*adapter.Response, keyRecord) {
		var rec keyRecord
		ctx := context.WithValue(context.Background(), seenKey{}, &rec)
		return adapter.Serve(ctx, api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: h}), rec
	}
	// The body each case must get, whatever the header spelled: a message
	// that varies with the header could echo it.
	reference := map[authCase]string{}
	for c, h := range map[authCase]string{authMissing: "", authOtherScheme: "Basic x", authEmptyKey: "Bearer", authWrongKey: "Bearer x"} {
		resp, _ := serve(h)
		reference[c] = string(resp.Body()[0])
	}
	f.Fuzz(func(t *testing.T, h string) {
		want, wantKey := oracleBearer(h)
		resp, rec := serve(h)
		defer resp.Release()
		headers := http.Header{}
		resp.VisitHeaders(headers.Set)
		switch want {
		case authGoodKey:
			if resp.Status != http.StatusOK || rec.calls != 1 || rec.key != wantKey {
				t.Fatalf("Authorization %q: status %d, authenticator saw %d call(s) with %q; want 200 and one call with %q", h, resp.Status, rec.calls, rec.key, wantKey)
			}
			return
		case authWrongKey:
			if rec.calls != 1 || rec.key != wantKey {
				t.Fatalf("Authorization %q: authenticator saw %d call(s) with %q; want one call with %q", h, rec.calls, rec.key, wantKey)
			}
		default:
			if rec.calls != 0 {
				t.Fatalf("Authorization %q: the authenticator was called with %q; no key was sent", h, rec.key)
			}
		}
		wantChallenge := `Bearer realm="inventory"`
		if want == authEmptyKey || want == authWrongKey {
			wantChallenge = `Bearer realm="inventory", error="invalid_token"`
		}
		if resp.Status != http.StatusUnauthorized || headers.Get("WWW-Authenticate") != wantChallenge {
			t.Fatalf("Authorization %q: status %d, WWW-Authenticate %q; want 401 and %q", h, resp.Status, headers.Get("WWW-Authenticate"), wantChallenge)
		}
		if body := resp.Body(); len(body) != 1 || string(body[0]) != reference[want] {
			t.Fatalf("Authorization %q: body %s; want the same body as any such header: %s", h, body, reference[want])
		}
	})
}

// The oracle is code too: hold it to a few answers worked by hand.
func TestBearerOracle(t *testing.T) {
	for _, c := range []struct {
		h    string
		want authCase
		key  string
	}{
		{"", authMissing, ""}, {"Basic x", authOtherScheme, ""}, {"bEaReR", authEmptyKey, ""},
		{"Bearer   k", authWrongKey, "k"}, {"Bearer\tk", authOtherScheme, ""}, {"Bearer " + fuzzGoodKey, authGoodKey, fuzzGoodKey},
	} {
		if got, key := oracleBearer(c.h); got != c.want || key != c.key {
			t.Errorf("oracleBearer(%q) = %v, %q; want %v, %q", c.h, got, key, c.want, c.key)
		}
	}
}
