package checks

import (
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const (
	srcEvery  = "CONTRACT.md §Every response"
	srcCodes  = "CONTRACT.md §Error codes"
	srcStore  = "CONTRACT.md §Store semantics"
	srcSchema = "inventory/openapi.yaml"
	srcStale  = "CONTRACT.md §Through a store outage (stale-if-error)"
)

// Response are the checks of every answer: its headers, its Error body,
// what its message names, that it never holds a key, and that it is what
// the OpenAPI document describes. Each looks at one answer of every kind
// the level knows (samples).
var Response = []*suite.Check{
	{
		Name: "headers/content-type", Source: srcEvery,
		Rule: "Every answer has Content-Type: application/json. petinventory sends no parameter; the suite tolerates charset=utf-8, which changes nothing for a JSON reader (RFC 8259 §11), and fails any other.",
		Run:  run(everyAnswerHas("Content-Type", contentTypeProblem)),
	},
	{
		Name: "headers/cache-control", Source: srcEvery + "; " + srcCaching,
		Rule: "A list answer (200, 304) has Cache-Control: private, no-cache (kept by the client only, revalidated each time); every other answer has Cache-Control: no-store.",
		Run:  run(headersCacheControl),
	},
	{
		Name: "headers/stale-if-error", Source: srcStale + "; RFC 5861 §4; RFC 9211; RFC 9111 §5.1",
		Rule: "A list answer that declares stale-if-error has it once, as stale-if-error=N with N whole seconds; its Cache-Status, if any, is a structured field list; a list the deployment marks stale (its member petinventory with fwd=stale) declares N and has one Age, whole seconds, at most N.",
		Run:  run(headersStaleIfError),
	},
	{
		Name: "headers/nosniff", Source: srcEvery,
		Rule: "Every answer has X-Content-Type-Options: nosniff.",
		Run:  run(everyAnswerHas("X-Content-Type-Options", nosniffProblem)),
	},
	{
		Name: "errors/body-shape", Spec: true,
		Source: "spec §7; " + srcEvery + "; " + srcCodes,
		Rule:   "Every error answer has the Error body {code, message, status}: exactly these members, status equal to the HTTP status, a non-empty message, and the code the table gives for the case.",
		Run:    run(errorsBodyShape),
	},
	{
		Name:   "errors/message-names-fault",
		Source: srcEvery,
		Rule:   "An error message names the field or header at fault: Authorization, petId, Content-Type, quantity, the unknown member, the method.",
		Run:    run(errorsMessageNamesFault),
	},
	{
		Name:   "errors/key-never-echoed",
		Source: srcEvery + "; " + srcAuth,
		Rule:   "No answer repeats a key or any part of the Authorization header: not with no scheme, another scheme, trailing junk, or a wrong key.",
		Run:    run(errorsKeyNeverEchoed),
	},
	{
		Name:   "openapi/responses",
		Source: srcSchema,
		Rule:   "Every answer matches the OpenAPI document: its status is documented for the operation, its body has the documented schema, and the documented headers are set.",
		Run:    run(openapiResponses),
	},
}

// headersCacheControl judges headers/cache-control.
func headersCacheControl(c checker) {
	for _, s := range c.samples() {
		vals := s.ex.Resp.Header.Values("Cache-Control")
		if s.ex.Req.Method == http.MethodGet && s.ex.Req.Path == "/inventory" && s.ex.Resp.Status == http.StatusOK {
			if p := listCacheControl(vals); p != "" {
				c.Failf(s.ex, "Cache-Control: private, no-cache on a list answer", "%s", p)
			}
			continue
		}
		if p := noStore(vals); p != "" {
			c.Failf(s.ex, "Cache-Control: no-store on every answer but the list", "%s", p)
		}
	}
}

// headersStaleIfError judges headers/stale-if-error on the list's answers:
// the default list (identity and gzip), HEAD, and the list revalidated
// (304). A deployment without the option declares nothing and marks no
// list stale: then only Cache-Status's form is judged, and the detail
// says so. A list is marked stale only while the store is unavailable,
// which a quick check does not cause: the consistency run's faults do
// (-consistency-stale-if-error judges such lists).
func headersStaleIfError(c checker) {
	first := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
	exs := []*wire.Exchange{first,
		c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: gzipAccept}),
		c.Do(wire.Request{Method: http.MethodHead, Path: "/inventory"})}
	if tag := first.Resp.Header.Get("ETag"); tag != "" {
		exs = append(exs, c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", IfNoneMatch: tag}))
	}
	declared, stale := 0, 0
	for _, ex := range exs {
		if ex.Resp.Status != http.StatusOK && ex.Resp.Status != http.StatusNotModified {
			continue
		}
		n, ok := c.staleDirective(ex)
		if ok && n >= 0 {
			declared++
		}
		marked, err := wire.StaleMark(ex.Resp.Header)
		switch {
		case err != nil:
			c.Failf(ex, "Cache-Status as RFC 9211 gives it: a list of members, each a cache's name with parameters (RFC 8941)", "%v", err)
		case marked:
			stale++
			c.expectAge(ex, n, ok)
		}
	}
	if declared == 0 && stale == 0 && !c.Failed() {
		c.UpdateResult(func(res *report.Result) {
			res.Detail = "the deployment declares no stale-if-error on its lists and marked none stale: only the form of Cache-Status, where present, was judged"
		})
	}
}

// staleDirective reads the stale-if-error directive of ex's
// Cache-Control: its seconds (-1 when it declares none), and false when
// it is malformed (which it reports).
func (c checker) staleDirective(ex *wire.Exchange) (int64, bool) {
	var found []string
	for _, v := range ex.Resp.Header.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); strings.HasPrefix(strings.ToLower(d), "stale-if-error") {
				found = append(found, d)
			}
		}
	}
	switch {
	case len(found) == 0:
		return -1, true
	case len(found) > 1:
		c.Failf(ex, "stale-if-error declared once", "Cache-Control declares stale-if-error %d times: %s", len(found), strings.Join(found, ", "))
		return -1, false
	}
	name, value, _ := strings.Cut(found[0], "=")
	n, err := strconv.ParseInt(value, 10, 64)
	if !strings.EqualFold(name, "stale-if-error") || err != nil || n < 0 || strings.Trim(value, "0123456789") != "" {
		c.Failf(ex, "stale-if-error=N, N whole seconds (RFC 5861 §4, RFC 9111 §1.2.2 delta-seconds)", "Cache-Control's %q is not stale-if-error=N with N whole seconds", found[0])
		return -1, false
	}
	return n, true
}

// expectAge judges the Age of list ex, marked stale, whose Cache-Control
// declared stale-if-error=n (-1: none; well-formed tells a directive
// that was malformed, reported already, from none).
func (c checker) expectAge(ex *wire.Exchange, n int64, wellFormed bool) {
	if n < 0 && wellFormed {
		c.Failf(ex, "a list marked stale declares its stale-if-error bound (Cache-Control: …, stale-if-error=N)", "the list is marked stale (Cache-Status: petinventory; fwd=stale) but declares no stale-if-error")
	}
	age, err := wire.Age(ex.Resp.Header)
	switch {
	case err != nil:
		c.Failf(ex, "a list marked stale has Age: the whole seconds since the state it shows was confirmed (RFC 9111 §5.1)", "the list is marked stale: %v", err)
	case n >= 0 && age > n:
		c.Failf(ex, fmt.Sprintf("Age at most the declared stale-if-error=%d", n), "the list is marked stale with Age %d, older than the stale-if-error=%d it declares", age, n)
	}
}

// errorsBodyShape judges errors/body-shape.
func errorsBodyShape(c checker) {
	for _, s := range c.samples() {
		if s.status != http.StatusOK {
			c.expectError(s.ex, s.status, s.code)
		}
	}
}

// errorsMessageNamesFault judges errors/message-names-fault.
func errorsMessageNamesFault(c checker) {
	unl := wire.ItemPath(c.UnlistedID())
	probes := []struct {
		r       wire.Request
		mention string
	}{
		{wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.NoAuth}, "Authorization"},
		{wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.WithAuth("Bearer " + wrongKey)}, "Authorization"},
		{wire.Request{Method: http.MethodDelete, Path: "/inventory"}, "DELETE"},
		{wire.Request{Method: http.MethodPatch, Path: "/inventory/abc", ContentType: "application/json", Body: wire.QtyBody(1)}, "petId"},
		{wire.Request{Method: http.MethodPatch, Path: unl, ContentType: "text/plain", Body: wire.QtyBody(1)}, "Content-Type"},
		{wire.Request{Method: http.MethodPatch, Path: unl, ContentType: "application/json", Body: []byte(`{}`)}, "quantity"},
		{wire.Request{Method: http.MethodPatch, Path: unl, ContentType: "application/json", Body: []byte(`{"quantity":"5"}`)}, "quantity"},
		{wire.Request{Method: http.MethodPatch, Path: unl, ContentType: "application/json", Body: []byte(`{"quantity":1,"colour":"red"}`)}, "colour"},
	}
	for _, p := range probes {
		ex := c.Do(p.r)
		msg, ok := errorMessage(ex.Resp)
		if !ok {
			c.Failf(ex, "an Error body whose message names "+p.mention, "no Error message in the answer (%s)", wire.ErrorSummary(ex.Resp))
			continue
		}
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(p.mention)) {
			c.Failf(ex, "a message that names "+p.mention, "message %q does not name %s", msg, p.mention)
		}
	}
}

// errorsKeyNeverEchoed judges errors/key-never-echoed.
func errorsKeyNeverEchoed(c checker) {
	key := c.Settings().APIKey
	if len(key) < wire.MinEchoKey {
		c.Skipf("the API key is shorter than %d characters: an echo of it cannot be told from chance", wire.MinEchoKey)
	}
	var probes []wire.Request
	for _, h := range []string{key, "Basic " + key, "Token " + key, "Bearer " + key + " extra", "Bearer " + key + ",", "Bearer" + key, "Bearer " + wrongKey, "Bearer " + key + "x"} {
		probes = append(probes,
			wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.WithAuth(h)},
			wire.Request{Method: http.MethodPatch, Path: "/inventory/abc", Auth: wire.WithAuth(h), ContentType: "application/json", Body: wire.QtyBody(1)})
	}
	probes = append(probes, wire.Request{Method: http.MethodPatch, Path: "/inventory/abc", ContentType: "application/json", Body: wire.QtyBody(1)})
	for _, r := range probes {
		ex := c.Do(r) // try flags an echo of the valid key
		if wire.Echoes(ex.Resp, wrongKey) {
			c.Failf(ex, "no key in any answer", "the answer echoes the wrong key that was sent (%s)", wrongKey)
		}
	}
}

// openapiResponses judges openapi/responses.
func openapiResponses(c checker) {
	for _, s := range c.samples() {
		// try has validated status and body already.
		op, _ := wire.OperationFor(s.ex.Req.Method, s.ex.Req.Path)
		want := wire.RequiredHeaders(op, s.ex.Resp.Status)
		for _, h := range want {
			if len(s.ex.Resp.Header.Values(h)) == 0 {
				c.Failf(s.ex, fmt.Sprintf("the headers the document requires for %d: %s", s.ex.Resp.Status, strings.Join(want, ", ")), "no %s header", h)
			}
		}
	}
}

// everyAnswerHas judges a headers/ check of one header: on every sample
// answer, problem finds nothing wrong with its values.
func everyAnswerHas(header string, problem func(vals []string) string) func(c checker) {
	return func(c checker) {
		for _, s := range c.samples() {
			if p := problem(s.ex.Resp.Header.Values(header)); p != "" {
				c.Failf(s.ex, c.Rule(), "%s", p)
			}
		}
	}
}

// contentTypeProblem says what is wrong with an answer's Content-Type, ""
// when it is application/json (charset=utf-8 tolerated).
func contentTypeProblem(vals []string) string {
	if len(vals) != 1 {
		return fmt.Sprintf("%d Content-Type headers, not 1", len(vals))
	}
	mt, params, err := mime.ParseMediaType(vals[0])
	if err != nil || mt != "application/json" {
		return fmt.Sprintf("Content-Type: %s", vals[0])
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return fmt.Sprintf("Content-Type: %s (application/json with no parameter, or tolerated, charset=utf-8; nothing else)", vals[0])
		}
	}
	return ""
}

// nosniffProblem says what is wrong with an answer's
// X-Content-Type-Options, "" when it is nosniff.
func nosniffProblem(vals []string) string {
	if len(vals) == 1 && strings.EqualFold(strings.TrimSpace(vals[0]), "nosniff") {
		return ""
	}
	if len(vals) == 0 {
		return "no X-Content-Type-Options header"
	}
	return fmt.Sprintf("X-Content-Type-Options: %s", strings.Join(vals, ", "))
}

// sample is a request that provokes one kind of answer.
type sample struct {
	ex     *wire.Exchange
	status int
	code   string
}

// samples provokes one answer of each kind the level knows: a list, an
// update (unless read-only), and each error status and code that a client
// can provoke. Updates are aimed at a listed pet with its current quantity
// or at requests that must be rejected, so nothing changes for good.
func (c checker) samples() []sample {
	var out []sample
	add := func(r wire.Request, status int, code string) {
		out = append(out, sample{ex: c.Do(r), status: status, code: code})
	}
	items, _, listErr := c.List()
	unl := int64(math.MaxInt64)
	if listErr == nil {
		unl = wire.Unlisted(items)
	}
	add(wire.Request{Method: http.MethodGet, Path: "/inventory"}, http.StatusOK, "")
	add(wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.NoAuth}, http.StatusUnauthorized, "unauthorized")
	add(wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.WithAuth("Bearer " + wrongKey)}, http.StatusUnauthorized, "unauthorized")
	add(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(unl), ContentType: "application/json", Body: wire.QtyBody(1)}, http.StatusNotFound, "not_found")
	if c.Contract() {
		add(wire.Request{Method: http.MethodPost, Path: "/inventory", ContentType: "application/json", Body: wire.QtyBody(1)}, http.StatusMethodNotAllowed, "method_not_allowed")
		add(wire.Request{Method: http.MethodGet, Path: wire.ItemPath(unl)}, http.StatusMethodNotAllowed, "method_not_allowed")
		add(wire.Request{Method: http.MethodPatch, Path: "/inventory/abc", ContentType: "application/json", Body: wire.QtyBody(1)}, http.StatusBadRequest, "invalid_pet_id")
	}
	if p, _ := c.TargetPath(); p != "" {
		add(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: []byte(`{}`)}, http.StatusBadRequest, "missing_field")
		add(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: []byte(`{"quantity":"5"}`)}, http.StatusBadRequest, "invalid_field")
		if c.Contract() {
			add(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: []byte(`{"quantity":`)}, http.StatusBadRequest, "invalid_json")
			add(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: []byte(`{"quantity":1,"status":"sold"}`)}, http.StatusBadRequest, "unknown_field")
			add(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "text/plain", Body: wire.QtyBody(1)}, http.StatusUnsupportedMediaType, "unsupported_media_type")
			add(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: paddedBody(c.Settings().MaxBodyBytes+1, 1)}, http.StatusRequestEntityTooLarge, "payload_too_large")
		}
	}
	if !c.Settings().ReadOnly && listErr == nil && len(items) > 0 {
		// An update to the current quantity: a 200 that changes nothing.
		c.Touch(items[0].ID)
		add(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(items[0].ID), ContentType: "application/json", Body: wire.QtyBody(items[0].Qty)}, http.StatusOK, "")
	}
	return out
}

// noStore returns what is wrong with the Cache-Control of an answer
// other than the list ("" when it says no-store).
func noStore(vals []string) string {
	for _, v := range vals {
		for _, d := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "no-store") {
				return ""
			}
		}
	}
	if len(vals) == 0 {
		return "no Cache-Control header"
	}
	return fmt.Sprintf("Cache-Control: %s (no-store missing)", strings.Join(vals, ", "))
}

// errorMessage returns the message member of an Error body.
func errorMessage(resp *wire.Response) (string, bool) {
	v, err := wire.DecodeJSON(resp.Body)
	if err != nil {
		return "", false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	msg, ok := obj["message"].(string)
	return msg, ok
}
