package conformancetest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

const (
	srcRoutes = "CONTRACT.md §Routes"
	srcAuth   = "CONTRACT.md §Authentication"
	srcOrder  = "CONTRACT.md §Check order"
)

// wrongKey is a bearer key that no deployment holds.
const wrongKey = "conformance-wrong-key-5e0c1d2a9f7b4c8e"

func routeChecks() []*check {
	return []*check{
		{
			name:   "routes/list-other-methods",
			source: srcRoutes,
			rule:   "Any other method on {base}/inventory (POST, PUT, DELETE, PATCH, OPTIONS) is 405 method_not_allowed with Allow: GET, HEAD.",
			run: func(c *checker) {
				for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
					c.expect405(c.do(otherMethod(m, "/inventory")), listAllow)
				}
			},
		},
		{
			name:   "routes/item-other-methods",
			source: srcRoutes,
			rule:   "Any other method on {base}/inventory/{petId} (GET, POST, PUT, DELETE, HEAD, OPTIONS) is 405 method_not_allowed with Allow: PATCH.",
			run: func(c *checker) {
				p := itemPath(c.unlistedID())
				for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodOptions} {
					c.expect405(c.do(otherMethod(m, p)), http.MethodPatch)
				}
			},
		},
		{
			name:   "routes/unknown-methods",
			source: srcRoutes,
			rule:   "A method outside the standard set (FOO, PROPFIND, a lowercase get: methods are case-sensitive) is 405 method_not_allowed with Allow, on both routes.",
			run: func(c *checker) {
				item := itemPath(c.unlistedID())
				for _, p := range []struct{ method, path, allow string }{
					{"FOO", "/inventory", listAllow},
					{"PROPFIND", "/inventory", listAllow},
					{"get", "/inventory", listAllow},
					{"FOO", item, http.MethodPatch},
					{"PROPFIND", item, http.MethodPatch},
					{"patch", item, http.MethodPatch},
				} {
					ex := c.do(request{method: p.method, path: p.path})
					if c.refusedInFront(ex) {
						continue
					}
					c.expect405(ex, p.allow)
				}
			},
		},
		{
			name:   "routes/trailing-slash",
			source: srcRoutes + " (decision: trailing slash)",
			rule:   "{base}/inventory/ is the item route with an empty petId: GET there is 405 with Allow: PATCH, not the list and not a redirect.",
			run: func(c *checker) {
				c.expect405(c.do(request{method: http.MethodGet, path: "/inventory/"}), http.MethodPatch)
			},
		},
	}
}

// otherMethod is a request with a method the path does not serve; methods
// that usually carry a body get a harmless one.
func otherMethod(method, path string) request {
	r := request{method: method, path: path}
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		r.contentType = "application/json"
		r.body = []byte(`{"quantity":1}`)
	}
	return r
}

// listAllow is the Allow header of the list's 405s: the list serves GET
// and HEAD (HEAD is GET without the body).
const listAllow = "GET, HEAD"

// expect405 checks a 405 answer and its Allow header, whose methods are
// allow's, in any order and on one line or several.
func (c *checker) expect405(ex *exchange, allow string) {
	if !c.expectError(ex, http.StatusMethodNotAllowed, "method_not_allowed") {
		return
	}
	expected := "405 with Allow: " + allow
	vals := ex.resp.header.Values("Allow")
	if len(vals) == 0 {
		c.failf(ex, expected, "no Allow header")
		return
	}
	var got []string
	for _, v := range vals {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				got = append(got, m)
			}
		}
	}
	want := strings.Split(allow, ", ")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		c.failf(ex, expected, "Allow: %s", strings.Join(vals, ", "))
	}
}

func authChecks() []*check {
	return []*check{
		{
			name: "auth/missing-header", spec: true,
			source: "spec §5; " + srcAuth,
			rule:   `No Authorization header is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory", on both routes.`,
			run: func(c *checker) {
				for _, r := range c.authProbes(noAuth) {
					c.expectUnauthorized(c.do(r), false)
				}
			},
		},
		{
			name: "auth/other-scheme", spec: true,
			source: "spec §5; " + srcAuth,
			rule:   `Another scheme (Basic, Token, Digest) is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory" (no error: no bearer credentials were sent).`,
			run: func(c *checker) {
				for _, h := range []string{"Basic dXNlcjpwYXNzd29yZA==", "Token " + c.rn.cfg.APIKey, `Digest username="inventory"`} {
					for _, r := range c.authProbes(withAuth(h)) {
						c.expectUnauthorized(c.do(r), false)
					}
				}
			},
		},
		{
			name: "auth/no-scheme", spec: true,
			source: "spec §5; " + srcAuth,
			rule:   `The key alone, with no scheme, is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory".`,
			run: func(c *checker) {
				for _, r := range c.authProbes(withAuth(c.rn.cfg.APIKey)) {
					c.expectUnauthorized(c.do(r), false)
				}
			},
		},
		{
			name:   "auth/empty-key",
			source: srcAuth + " (decision: empty key)",
			rule:   `"Bearer" with no key is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory", error="invalid_token".`,
			run: func(c *checker) {
				for _, r := range c.authProbes(withAuth("Bearer")) {
					c.expectUnauthorized(c.do(r), true)
				}
			},
		},
		{
			name: "auth/wrong-key", spec: true,
			source: "spec §5; " + srcAuth,
			rule:   `An unknown key (also the valid key with a character added) is 401 unauthorized with WWW-Authenticate: Bearer realm="inventory", error="invalid_token".`,
			run: func(c *checker) {
				key := c.rn.cfg.APIKey
				for _, k := range []string{wrongKey, key + "x", "x" + key} {
					for _, r := range c.authProbes(withAuth("Bearer " + k)) {
						c.expectUnauthorized(c.do(r), true)
					}
				}
			},
		},
		{
			name:   "auth/scheme-case-insensitive",
			source: srcAuth + " (RFC 7235)",
			rule:   "The scheme name is case-insensitive: bearer, BEARER and bEaReR are accepted.",
			run: func(c *checker) {
				for _, s := range []string{"bearer", "BEARER", "bEaReR"} {
					ex := c.do(request{method: http.MethodGet, path: "/inventory", auth: withAuth(s + " " + c.rn.cfg.APIKey)})
					c.expectStatus(ex, http.StatusOK, "200: the key is valid whatever the scheme's case")
				}
			},
		},
		{
			name:   "auth/several-spaces",
			source: srcAuth,
			rule:   "One or more spaces separate the scheme from the key: Bearer followed by three spaces and the key is accepted.",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodGet, path: "/inventory", auth: withAuth("Bearer   " + c.rn.cfg.APIKey)})
				c.expectStatus(ex, http.StatusOK, "200: spaces between scheme and key are allowed")
			},
		},
		{
			name: "auth/unknown-pet", spec: true,
			source: "spec §5; " + srcOrder,
			rule:   "An update of a pet that does not exist, without a valid key, is 401, not 404: authentication comes first.",
			run: func(c *checker) {
				p := itemPath(c.unlistedID())
				for _, a := range []*authHeader{noAuth, withAuth("Bearer " + wrongKey)} {
					ex := c.do(request{method: http.MethodPatch, path: p, auth: a, contentType: "application/json", body: []byte(`{"quantity":1}`)})
					c.expectUnauthorized(ex, a != noAuth)
				}
			},
		},
	}
}

// authProbes are a list and an update request with the given
// Authorization. The update is aimed at a listed pet with its current
// quantity, so that even a server that wrongly accepts it changes
// nothing; without a listed pet, at an unlisted id.
func (c *checker) authProbes(a *authHeader) []request {
	probes := []request{{method: http.MethodGet, path: "/inventory", auth: a}}
	items, _, err := c.list()
	if err != nil {
		return probes // list/ok reports it; the list probe still runs
	}
	up := request{method: http.MethodPatch, auth: a, contentType: "application/json"}
	if len(items) > 0 {
		up.path = itemPath(items[0].id)
		up.body = qtyBody(items[0].qty)
		c.protect()
		c.guarded[items[0].id] = true
	} else {
		up.path = itemPath(unlisted(items))
		up.body = qtyBody(1)
	}
	return append(probes, up)
}

// expectUnauthorized checks a 401 and, at LevelContract, its
// WWW-Authenticate challenge: error="invalid_token" exactly when bearer
// credentials were sent.
func (c *checker) expectUnauthorized(ex *exchange, invalidToken bool) {
	if !c.expectError(ex, http.StatusUnauthorized, "unauthorized") || !c.contract() {
		return
	}
	want := `Bearer realm="inventory"`
	if invalidToken {
		want += `, error="invalid_token"`
	}
	expected := "401 with WWW-Authenticate: " + want
	vals := ex.resp.header.Values("WWW-Authenticate")
	if len(vals) != 1 {
		c.failf(ex, expected, "%d WWW-Authenticate headers, not 1", len(vals))
		return
	}
	scheme, params, err := parseChallenge(vals[0])
	switch {
	case err != nil:
		c.failf(ex, expected, "WWW-Authenticate %q: %v", vals[0], err)
	case !strings.EqualFold(scheme, "Bearer"):
		c.failf(ex, expected, "WWW-Authenticate scheme %q, not Bearer", scheme)
	case params["realm"] != "inventory":
		c.failf(ex, expected, "WWW-Authenticate %q: realm is not \"inventory\"", vals[0])
	case invalidToken && params["error"] != "invalid_token":
		c.failf(ex, expected, `WWW-Authenticate %q: bearer credentials were sent, so error="invalid_token" is required (RFC 6750 §3.1)`, vals[0])
	case !invalidToken && params["error"] != "":
		c.failf(ex, expected, "WWW-Authenticate %q: no bearer credentials were sent, so there must be no error parameter (RFC 6750 §3.1)", vals[0])
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

func orderChecks() []*check {
	return []*check{
		{
			name:   "order/method-before-auth",
			source: srcOrder,
			rule:   "The route's method is checked before authentication: another method without a valid key is 405, not 401.",
			run: func(c *checker) {
				p := itemPath(c.unlistedID())
				c.expect405(c.do(request{method: http.MethodDelete, path: "/inventory", auth: noAuth}), listAllow)
				c.expect405(c.do(request{method: http.MethodPut, path: p, auth: noAuth}), http.MethodPatch)
				c.expect405(c.do(request{method: http.MethodGet, path: p, auth: withAuth("Bearer " + wrongKey)}), http.MethodPatch)
			},
		},
		{
			name:   "order/auth-first",
			source: srcAuth + "; " + srcOrder,
			rule:   "An unauthenticated caller learns nothing: without a valid key, a bad petId, a bad media type, a body over the limit, a bad body, an unknown pet are all 401, and a listed and an unlisted pet get the same answer.",
			run: func(c *checker) {
				items, _, err := c.list()
				if err != nil {
					c.skipf("cannot discover pets: %v (see list/ok)", err)
				}
				unl := itemPath(unlisted(items))
				big := paddedBody(c.rn.cfg.MaxBodyBytes+1, 1)
				for _, a := range []*authHeader{noAuth, withAuth("Bearer " + wrongKey)} {
					invalid := a != noAuth
					probes := []request{
						{method: http.MethodPatch, path: "/inventory/abc", auth: a, contentType: "application/json", body: []byte(`{"quantity":1}`)},
						{method: http.MethodPatch, path: unl, auth: a, contentType: "text/plain", body: []byte(`{"quantity":1}`)},
						{method: http.MethodPatch, path: unl, auth: a, contentType: "application/json", body: big},
						{method: http.MethodPatch, path: unl, auth: a, contentType: "application/json", body: []byte(`{"quantity":`)},
						{method: http.MethodPatch, path: unl, auth: a, contentType: "application/json", body: []byte(`{}`)},
						{method: http.MethodPatch, path: unl, auth: a, contentType: "application/json", body: []byte(`{"quantity":1}`)},
					}
					for _, r := range probes {
						c.expectUnauthorized(c.do(r), invalid)
					}
					if len(items) == 0 {
						continue
					}
					// Same request to a listed pet (its current quantity:
					// a wrong acceptance changes nothing) and to an
					// unlisted one: the answers must not differ.
					c.protect()
					c.guarded[items[0].id] = true
					known := c.do(request{method: http.MethodPatch, path: itemPath(items[0].id), auth: a, contentType: "application/json", body: qtyBody(items[0].qty)})
					unknown := c.do(request{method: http.MethodPatch, path: unl, auth: a, contentType: "application/json", body: qtyBody(items[0].qty)})
					if known.resp.status != unknown.resp.status || string(known.resp.body) != string(unknown.resp.body) {
						c.failf(unknown, "the same answer for a listed and an unlisted pet",
							"without a valid key, a listed pet gets %s %s but an unlisted one gets %s %s: the answer tells which pets exist",
							errorSummary(known.resp), showBody(known.resp.body), errorSummary(unknown.resp), showBody(unknown.resp.body))
					}
				}
			},
		},
		{
			name:   "order/pet-id-before-media-type",
			source: srcOrder,
			rule:   "petId is checked before the media type: PATCH /inventory/abc with Content-Type text/plain is 400 invalid_pet_id.",
			run: func(c *checker) {
				ex := c.do(request{method: http.MethodPatch, path: "/inventory/abc", contentType: "text/plain", body: []byte("hello")})
				c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
			},
		},
		{
			name:   "order/media-type-before-size",
			source: srcOrder,
			rule:   "The media type is checked before the body size: a text/plain body over the limit is 415.",
			run: func(c *checker) {
				p := c.target()
				ex := c.do(request{method: http.MethodPatch, path: p, contentType: "text/plain", body: paddedBody(c.rn.cfg.MaxBodyBytes+1, 1)})
				c.expectError(ex, http.StatusUnsupportedMediaType, "unsupported_media_type")
			},
		},
		{
			name:   "order/size-before-body",
			source: srcOrder,
			rule:   "The body size is checked before the body: invalid JSON over the limit is 413, not 400.",
			run: func(c *checker) {
				p := c.target()
				body := []byte("{" + strings.Repeat("x", int(c.rn.cfg.MaxBodyBytes)))
				ex := c.do(request{method: http.MethodPatch, path: p, contentType: "application/json", body: body})
				c.expectError(ex, http.StatusRequestEntityTooLarge, "payload_too_large")
			},
		},
		{
			name:   "order/body-before-store",
			source: srcOrder,
			rule:   "The body is checked before the store: an invalid body for a pet that does not exist is 400 with the body's code, not 404.",
			run: func(c *checker) {
				p := itemPath(c.unlistedID())
				for _, tc := range []struct{ body, code string }{
					{`nope`, "invalid_json"},
					{`{}`, "missing_field"},
					{`{"quantity":"5"}`, "invalid_field"},
					{`{"quantity":1,"status":"sold"}`, "unknown_field"},
				} {
					ex := c.do(request{method: http.MethodPatch, path: p, contentType: "application/json", body: []byte(tc.body)})
					c.expectError(ex, http.StatusBadRequest, tc.code)
				}
			},
		},
	}
}

// paddedBody returns a valid update body of exactly n bytes: the object
// with spaces before its closing brace.
func paddedBody(n int64, qty int64) []byte {
	head := fmt.Sprintf(`{"quantity":%d`, qty)
	pad := int(n) - len(head) - 1
	if pad < 0 {
		pad = 0
	}
	return []byte(head + strings.Repeat(" ", pad) + "}")
}
