package checks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcAuth = "CONTRACT.md §Authentication"

// Auth are the checks of authentication: the bearer key, its scheme, and
// what a request without a valid key gets.
var Auth = []*suite.Check{
	{
		Name: "auth/missing-header", Spec: true,
		Source: "spec §5; " + srcAuth,
		Rule:   `No Authorization header is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory", on both routes.`,
		Run:    run(authMissingHeader),
	},
	{
		Name: "auth/other-scheme", Spec: true,
		Source: "spec §5; " + srcAuth,
		Rule:   `Another scheme (Basic, Token, Digest) is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory" (no error: no bearer credentials were sent).`,
		Run:    run(authOtherScheme),
	},
	{
		Name: "auth/no-scheme", Spec: true,
		Source: "spec §5; " + srcAuth,
		Rule:   `The key alone, with no scheme, is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory".`,
		Run:    run(authNoScheme),
	},
	{
		Name:   "auth/empty-key",
		Source: srcAuth + " (decision: empty key)",
		Rule:   `"Bearer" with no key is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory", error="invalid_token".`,
		Run:    run(authEmptyKey),
	},
	{
		Name: "auth/wrong-key", Spec: true,
		Source: "spec §5; " + srcAuth,
		Rule:   `An unknown key (also the valid key with a character added) is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory", error="invalid_token".`,
		Run:    run(authWrongKey),
	},
	{
		Name:   "auth/scheme-case-insensitive",
		Source: srcAuth + " (RFC 7235)",
		Rule:   "The scheme name is case-insensitive: bearer, BEARER and bEaReR are accepted.",
		Run:    run(authSchemeCaseInsensitive),
	},
	{
		Name:   "auth/several-spaces",
		Source: srcAuth,
		Rule:   "One or more spaces separate the scheme from the key: Bearer followed by three spaces and the key is accepted.",
		Run:    run(authSeveralSpaces),
	},
	{
		Name: "auth/unknown-pet", Spec: true,
		Source: "spec §5; " + srcOrder,
		Rule:   "An update of a pet that does not exist, without a valid key, is 401, not 404: authentication comes first.",
		Run:    run(authUnknownPet),
	},
}

// authMissingHeader judges auth/missing-header.
func authMissingHeader(c checker) {
	for _, r := range c.authProbes(wire.NoAuth) {
		c.expectUnauthorized(c.Do(r), false)
	}
}

// authOtherScheme judges auth/other-scheme.
func authOtherScheme(c checker) {
	for _, h := range []string{"Basic dXNlcjpwYXNzd29yZA==", "Token " + c.Settings().APIKey, `Digest username="inventory"`} {
		for _, r := range c.authProbes(wire.WithAuth(h)) {
			c.expectUnauthorized(c.Do(r), false)
		}
	}
}

// authNoScheme judges auth/no-scheme.
func authNoScheme(c checker) {
	for _, r := range c.authProbes(wire.WithAuth(c.Settings().APIKey)) {
		c.expectUnauthorized(c.Do(r), false)
	}
}

// authEmptyKey judges auth/empty-key.
func authEmptyKey(c checker) {
	for _, r := range c.authProbes(wire.WithAuth("Bearer")) {
		c.expectUnauthorized(c.Do(r), true)
	}
}

// authWrongKey judges auth/wrong-key.
func authWrongKey(c checker) {
	key := c.Settings().APIKey
	for _, k := range []string{wrongKey, key + "x", "x" + key} {
		for _, r := range c.authProbes(wire.WithAuth("Bearer " + k)) {
			c.expectUnauthorized(c.Do(r), true)
		}
	}
}

// authSchemeCaseInsensitive judges auth/scheme-case-insensitive.
func authSchemeCaseInsensitive(c checker) {
	for _, s := range []string{"bearer", "BEARER", "bEaReR"} {
		ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.WithAuth(s + " " + c.Settings().APIKey)})
		c.expectStatus(ex, http.StatusOK, "200: the key is valid whatever the scheme's case")
	}
}

// authSeveralSpaces judges auth/several-spaces.
func authSeveralSpaces(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.WithAuth("Bearer   " + c.Settings().APIKey)})
	c.expectStatus(ex, http.StatusOK, "200: spaces between scheme and key are allowed")
}

// authUnknownPet judges auth/unknown-pet.
func authUnknownPet(c checker) {
	p := wire.ItemPath(c.UnlistedID())
	for _, a := range []*wire.AuthHeader{wire.NoAuth, wire.WithAuth("Bearer " + wrongKey)} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, Auth: a, ContentType: "application/json", Body: []byte(`{"quantity":1}`)})
		c.expectUnauthorized(ex, a != wire.NoAuth)
	}
}

// authProbes are a list and an update request with the given
// Authorization. The update is aimed at a listed pet with its current
// quantity, so that even a server that wrongly accepts it changes
// nothing; without a listed pet, at an unlisted id.
func (c checker) authProbes(a *wire.AuthHeader) []wire.Request {
	probes := []wire.Request{{Method: http.MethodGet, Path: "/inventory", Auth: a}}
	items, _, err := c.List()
	if err != nil {
		return probes // list/ok reports it; the list probe still runs
	}
	up := wire.Request{Method: http.MethodPatch, Auth: a, ContentType: "application/json"}
	if len(items) > 0 {
		up.Path = wire.ItemPath(items[0].ID)
		up.Body = wire.QtyBody(items[0].Qty)
		c.Guard(items[0].ID)
	} else {
		up.Path = wire.ItemPath(wire.Unlisted(items))
		up.Body = wire.QtyBody(1)
	}
	return append(probes, up)
}

// expectUnauthorized checks a 401 and, at LevelContract, its
// WWW-Authenticate challenge: error="invalid_token" exactly when bearer
// credentials were sent.
func (c checker) expectUnauthorized(ex *wire.Exchange, invalidToken bool) {
	if !c.expectError(ex, http.StatusUnauthorized, "unauthorized") || !c.Contract() {
		return
	}
	want := `Bearer realm="inventory"`
	if invalidToken {
		want += `, error="invalid_token"`
	}
	expected := "401 with WWW-Authenticate: " + want
	vals := ex.Resp.Header.Values("WWW-Authenticate")
	if len(vals) != 1 {
		c.Failf(ex, expected, "%d WWW-Authenticate headers, not 1", len(vals))
		return
	}
	scheme, params, err := parseChallenge(vals[0])
	switch {
	case err != nil:
		c.Failf(ex, expected, "WWW-Authenticate %q: %v", vals[0], err)
	case !strings.EqualFold(scheme, "Bearer"):
		c.Failf(ex, expected, "WWW-Authenticate scheme %q, not Bearer", scheme)
	case params["realm"] != "inventory":
		c.Failf(ex, expected, "WWW-Authenticate %q: realm is not \"inventory\"", vals[0])
	case invalidToken && params["error"] != "invalid_token":
		c.Failf(ex, expected, `WWW-Authenticate %q: bearer credentials were sent, so error="invalid_token" is required (RFC 6750 §3.1)`, vals[0])
	case !invalidToken && params["error"] != "":
		c.Failf(ex, expected, "WWW-Authenticate %q: no bearer credentials were sent, so there must be no error parameter (RFC 6750 §3.1)", vals[0])
	}
}

// parseChallenge parses one RFC 7235 challenge: a scheme and
// comma-separated name=value parameters (values quoted or tokens).
// Parameter names are returned lower-case.
func parseChallenge(s string) (scheme string, params map[string]string, err error) {
	s = strings.TrimSpace(s)
	scheme, rest, _ := strings.Cut(s, " ")
	if scheme == "" {
		return "", nil, fmt.Errorf("no scheme")
	}
	params = map[string]string{}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			return scheme, nil, fmt.Errorf("parameter %q has no value", rest)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		after = strings.TrimLeft(after, " ")
		var val string
		if strings.HasPrefix(after, `"`) {
			var sb strings.Builder
			i := 1
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				sb.WriteByte(after[i])
			}
			if i >= len(after) {
				return scheme, nil, fmt.Errorf("unterminated quoted value")
			}
			val, rest = sb.String(), after[i+1:]
		} else {
			end := strings.IndexByte(after, ',')
			if end < 0 {
				end = len(after)
			}
			val, rest = strings.TrimSpace(after[:end]), after[end:]
		}
		if _, dup := params[name]; dup {
			return scheme, nil, fmt.Errorf("parameter %s appears twice", name)
		}
		params[name] = val
		rest = strings.TrimSpace(rest)
		if rest != "" {
			if !strings.HasPrefix(rest, ",") {
				return scheme, nil, fmt.Errorf("expected ',' before %q", rest)
			}
			rest = strings.TrimSpace(rest[1:])
		}
	}
	return scheme, params, nil
}
