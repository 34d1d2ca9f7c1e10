package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// A broken server is the real inventory.API with one rule broken by a
// small net/http middleware that perturbs the request before the API sees
// it or the answer after it — never a second implementation.
type wrapper func(api *inventory.API, next http.Handler) http.Handler

// brokenCase is one deliberately broken server and the check that must
// catch it.
type brokenCase struct {
	name  string // what is broken
	check string // the check that must report it failed
	// mention must appear in one of that check's failure problems, so
	// that it fails for this reason and not another.
	mention string
	wrap    wrapper
	opts    []inventory.Option // options of the API (e.g. another body limit)
	empty   bool               // start from an empty store instead of the seed
	// unrestorable marks a server whose breakage also defeats the
	// suite's restoration (it reads a stale list, it adds, it creates).
	unrestorable bool
	// serve mounts the API, for a breakage no handler can make (what a
	// framework answers before any handler runs); nil: net/http.
	serve func(t testing.TB, api *inventory.API) string
}

// validAuth is the Authorization header the suite sends with the key.
const validAuth = "Bearer " + testKey

// onRequest lets f rewrite the request (body included) before the API
// sees it. f returns the body to pass on.
func onRequest(f func(r *http.Request, body []byte) []byte) wrapper {
	return func(_ *inventory.API, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r2 := r.Clone(r.Context())
			nb := f(r2, body)
			if !bytes.Equal(nb, body) {
				r2.ContentLength = int64(len(nb))
			}
			r2.Body = io.NopCloser(bytes.NewReader(nb))
			next.ServeHTTP(w, r2)
		})
	}
}

// recorded is an answer of the API, for onResponse to change.
type recorded struct {
	status int
	header http.Header
	body   []byte
}

// onResponse lets f change the API's answer before it is sent.
func onResponse(f func(r *http.Request, resp *recorded)) wrapper {
	return func(_ *inventory.API, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rr := deadlineRecorder{httptest.NewRecorder(), w}
			next.ServeHTTP(rr, r)
			rec := &recorded{status: rr.Code, header: rr.Header(), body: rr.Body.Bytes()}
			f(r, rec)
			writeRecorded(w, rec)
		})
	}
}

// deadlineRecorder records an answer while the API's read deadlines reach
// the connection (http.ResponseController unwraps it), so that a server
// with one rule broken in its answers still times a stalled body out,
// instead of holding it until the suite gives up.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	w http.ResponseWriter
}

func (d deadlineRecorder) Unwrap() http.ResponseWriter { return d.w }

func serveRecorded(h http.Handler, r *http.Request) *recorded {
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, r)
	return &recorded{status: rr.Code, header: rr.Header(), body: rr.Body.Bytes()}
}

func writeRecorded(w http.ResponseWriter, rec *recorded) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(rec.body)))
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body)
}

// setError replaces an answer with an Error body, keeping the contract's
// headers.
func (rec *recorded) setError(status int, code, message string) {
	rec.status = status
	rec.body = fmt.Appendf(nil, `{"code":%q,"message":%q,"status":%d}`, code, message, status)
	rec.header.Set("Content-Type", "application/json")
}

// errorAnswer answers with an Error body and the contract's headers,
// without the API.
func errorAnswer(w http.ResponseWriter, status int, code, message string) {
	rec := &recorded{header: http.Header{}}
	rec.header.Set("Cache-Control", "no-store")
	rec.header.Set("X-Content-Type-Options", "nosniff")
	rec.setError(status, code, message)
	writeRecorded(w, rec)
}

// editError changes members of an Error body.
func (rec *recorded) editError(f func(m map[string]any)) {
	var m map[string]any
	if json.Unmarshal(rec.body, &m) != nil {
		return
	}
	f(m)
	rec.body, _ = json.Marshal(m)
}

// petID returns the pet id of an update path, if it is one.
func petID(r *http.Request) (int64, bool) {
	s, ok := strings.CutPrefix(r.URL.Path, "/inventory/")
	if !ok || r.Method != http.MethodPatch {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// listed reports whether the store behind api holds pet id, and its item.
func listed(api *inventory.API, r *http.Request, id int64) (inventory.Item, bool) {
	items, err := api.Service().List(r.Context())
	if err != nil {
		return inventory.Item{}, false
	}
	for _, it := range items {
		if it.PetID == id {
			return it, true
		}
	}
	return inventory.Item{}, false
}

var quantityRE = regexp.MustCompile(`"quantity"\s*:\s*(-?\d+)`)

// brokenCases lists at least one broken server per check of the suite;
// TestBrokenServers proves each is caught by its check.
var brokenCases = []brokenCase{
	// security: a Fiber app without the recipe's ErrorHandler answers an
	// unparsable head with fasthttp's error, which quotes the head.
	{name: "answers an unparsable head with the head, key included (Fiber's default ErrorHandler)",
		check: "security/malformed-head-no-echo", mention: "repeats the API key",
		serve: func(t testing.TB, api *inventory.API) string {
			return serveFiberWith(t, api, fiber.Config{DisableStartupMessage: true, ErrorHandler: fiber.DefaultErrorHandler})
		}},
	// list
	{name: "returns null for an empty list", check: "list/ok", mention: "not an array", empty: true,
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if r.Method == http.MethodGet && string(rec.body) == "[]" {
				rec.body = []byte("null")
			}
		})},
	{name: "adds a member to listed items", check: "list/items-schema", mention: `"name"`,
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if r.Method == http.MethodGet && rec.status == 200 {
				rec.body = bytes.ReplaceAll(rec.body, []byte(`{"petId"`), []byte(`{"name":"Rex","petId"`))
			}
		})},
	{name: "lists unsorted", check: "list/sorted", mention: "follows petId",
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			var items []json.RawMessage
			if r.Method == http.MethodGet && rec.status == 200 && json.Unmarshal(rec.body, &items) == nil {
				for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
					items[i], items[j] = items[j], items[i]
				}
				rec.body, _ = json.Marshal(items)
			}
		})},
	{name: "honours ?limit", check: "list/query-ignored", mention: "differs",
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			var items []json.RawMessage
			if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && json.Unmarshal(rec.body, &items) == nil && n < len(items) {
				rec.body, _ = json.Marshal(items[:n])
			}
		})},
	// routes
	{name: "drops Allow on 405", check: "routes/list-other-methods", mention: "no Allow header",
		wrap: onResponse(func(_ *http.Request, rec *recorded) { rec.header.Del("Allow") })},
	{name: "serves OPTIONS on the list", check: "routes/list-other-methods", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodOptions {
				r.Method = http.MethodGet
			}
			return b
		})},
	{name: "leaves HEAD out of the list's Allow", check: "routes/list-other-methods", mention: "Allow: GET",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.header.Get("Allow") == "GET, HEAD" {
				rec.header.Set("Allow", "GET")
			}
		})},
	// HEAD on the list
	{name: "refuses HEAD on the list", check: "head/list", mention: "answered 405",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodHead {
				r.Method = http.MethodPost
			}
			return b
		})},
	{name: "HEAD without the GET's length", check: "head/list", mention: "Content-Length",
		// An answer passed through a recorder keeps no length for a
		// body HEAD never had: Content-Length 0.
		wrap: onResponse(func(*http.Request, *recorded) {})},
	{name: "HEAD ignores If-None-Match", check: "head/not-modified", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodHead {
				r.Header.Del("If-None-Match")
			}
			return b
		})},
	{name: "HEAD before authentication", check: "head/auth-first", mention: "answered",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodHead {
				r.Header.Set("Authorization", validAuth)
			}
			return b
		})},
	// a body that stalls
	{name: "waits for a stalled body as long as the client", check: "body/stalled", mention: "no answer within",
		opts: []inventory.Option{inventory.WithBodyTimeout(0)}},
	{name: "lists on GET of an item", check: "routes/item-other-methods", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/inventory/") {
				r.URL.Path = "/inventory"
			}
			return b
		})},
	{name: "redirects the trailing slash", check: "routes/trailing-slash", mention: "answered 301",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/inventory/" {
					http.Redirect(w, r, "/v1/inventory", http.StatusMovedPermanently)
					return
				}
				next.ServeHTTP(w, r)
			})
		}},
	// auth
	{name: "wrong WWW-Authenticate", check: "auth/missing-header", mention: "no error parameter",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.status == 401 {
				rec.header.Set("WWW-Authenticate", `Bearer realm="inventory", error="invalid_token"`)
			}
		})},
	{name: "accepts the Token scheme", check: "auth/other-scheme", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Token "); ok {
				r.Header.Set("Authorization", "Bearer "+k)
			}
			return b
		})},
	{name: "accepts a bare key", check: "auth/no-scheme", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if h := r.Header.Get("Authorization"); h != "" && !strings.Contains(h, " ") {
				r.Header.Set("Authorization", "Bearer "+h)
			}
			return b
		})},
	{name: "no invalid_token for an empty key", check: "auth/empty-key", mention: `error="invalid_token" is required`,
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if r.Header.Get("Authorization") == "Bearer" {
				rec.header.Set("WWW-Authenticate", `Bearer realm="inventory"`)
			}
		})},
	{name: "no invalid_token for a wrong key", check: "auth/wrong-key", mention: `error="invalid_token" is required`,
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.status == 401 {
				rec.header.Set("WWW-Authenticate", `Bearer realm="inventory"`)
			}
		})},
	{name: "accepts a key with a suffix", check: "auth/wrong-key", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if strings.HasPrefix(r.Header.Get("Authorization"), validAuth) {
				r.Header.Set("Authorization", validAuth) // compares a prefix only
			}
			return b
		})},
	{name: "case-sensitive scheme", check: "auth/scheme-case-insensitive", mention: "answered 401",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if h := r.Header.Get("Authorization"); !strings.HasPrefix(h, "Bearer ") {
				r.Header.Del("Authorization")
			}
			return b
		})},
	{name: "one space only", check: "auth/several-spaces", mention: "answered 401",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer  ") {
				r.Header.Set("Authorization", "Bearer  invalid") // the key kept its leading spaces
			}
			return b
		})},
	{name: "answers 404 before 401", check: "auth/unknown-pet", mention: "answered 404",
		wrap: notFoundBeforeAuth},
	// order
	{name: "authenticates before routing", check: "order/method-before-auth", mention: "answered 401",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Header.Get("Authorization") != validAuth {
				r.Method, r.URL.Path = http.MethodGet, "/inventory" // the API then answers 401
			}
			return b
		})},
	{name: "answers 404 before 401 (ordering)", check: "order/auth-first", mention: "answered 404",
		wrap: notFoundBeforeAuth},
	{name: "checks the size before auth", check: "order/auth-first", mention: "answered 413",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.ContentLength > inventory.DefaultMaxBodyBytes {
					errorAnswer(w, 413, "payload_too_large", "too large")
					return
				}
				next.ServeHTTP(w, r)
			})
		}},
	{name: "checks the media type before petId", check: "order/pet-id-before-media-type", mention: "answered 415",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Header.Get("Content-Type") == "text/plain" {
				r.URL.Path = "/inventory/1" // a valid id: the API answers 415
			}
			return b
		})},
	{name: "checks the size before the media type", check: "order/media-type-before-size", mention: "answered 413",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if len(b) > inventory.DefaultMaxBodyBytes {
				r.Header.Set("Content-Type", "application/json")
			}
			return b
		})},
	{name: "parses the body before the size", check: "order/size-before-body", mention: "answered 400",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.Method == http.MethodPatch && !json.Valid(b) {
					errorAnswer(w, 400, "invalid_json", "the body is not JSON")
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				next.ServeHTTP(w, r)
			})
		}},
	{name: "looks up the pet before the body", check: "order/body-before-store", mention: "answered 404",
		wrap: func(api *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if id, ok := petID(r); ok && r.Header.Get("Authorization") == validAuth {
					if _, ok := listed(api, r, id); !ok {
						errorAnswer(w, 404, "not_found", "no such pet")
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		}},
	// petId
	{name: "creates unknown pets", check: "petid/unknown", mention: "answered 200", unrestorable: true,
		wrap: func(api *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if id, ok := petID(r); ok && r.Header.Get("Authorization") == validAuth {
					if _, ok := listed(api, r, id); !ok {
						_ = api.Service().Put(r.Context(), inventory.Item{PetID: id, Status: inventory.StatusAvailable})
					}
				}
				next.ServeHTTP(w, r)
			})
		}},
	{name: "reads 1e3 as pet 1000", check: "petid/not-an-integer", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if s, ok := strings.CutPrefix(r.URL.Path, "/inventory/"); ok {
				if f, ok := new(big.Rat).SetString(s); ok && f.IsInt() && strings.ContainsAny(s, "eE") {
					r.URL.Path = "/inventory/" + f.Num().String()
				}
			}
			return b
		})},
	{name: "clamps a huge petId", check: "petid/out-of-range", mention: "answered 404",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if s, ok := strings.CutPrefix(r.URL.Path, "/inventory/"); ok {
				if _, err := strconv.ParseInt(s, 10, 64); errors.Is(err, strconv.ErrRange) {
					r.URL.Path = "/inventory/9223372036854775807"
				}
			}
			return b
		})},
	{name: "routes the empty petId to the list", check: "petid/empty", mention: "answered 405",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.URL.Path == "/inventory/" {
				r.URL.Path = "/inventory"
			}
			return b
		})},
	{name: "rejects leading zeros and +", check: "petid/sign-and-leading-zeros", mention: "answered 400",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s, _ := strings.CutPrefix(r.URL.Path, "/inventory/")
				if strings.HasPrefix(s, "+") || (len(s) > 1 && s[0] == '0') {
					errorAnswer(w, 400, "invalid_pet_id", "petId must be canonical")
					return
				}
				next.ServeHTTP(w, r)
			})
		}},
	// media type
	{name: "requires a Content-Type", check: "media/absent", mention: "answered 415",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodPatch && r.Header.Get("Content-Type") == "" {
				r.Header.Set("Content-Type", "text/plain")
			}
			return b
		})},
	{name: "rejects media type parameters", check: "media/json-with-charset", mention: "answered 415",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if ct := r.Header.Get("Content-Type"); strings.Contains(ct, ";") || ct == "Application/JSON" {
				r.Header.Set("Content-Type", "text/plain")
			}
			return b
		})},
	{name: "rejects merge-patch", check: "media/merge-patch", mention: "answered 415",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/merge-patch+json") {
				r.Header.Set("Content-Type", "text/plain")
			}
			return b
		})},
	{name: "500 instead of 415", check: "media/unsupported", mention: "answered 500",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.status == 415 {
				rec.setError(500, "internal", "internal error; the server logged the details")
			}
		})},
	{name: "parses the body before the media type", check: "media/checked-before-body", mention: "answered 400",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Header.Get("Content-Type") == "text/plain" && !json.Valid(b) {
				r.Header.Set("Content-Type", "application/json")
			}
			return b
		})},
	// body size
	{name: "ignores the body limit", check: "size/over-limit", mention: "answered 200",
		opts: []inventory.Option{inventory.WithMaxBodyBytes(1 << 20)}},
	{name: "limits only by Content-Length", check: "size/over-limit-chunked", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.ContentLength < 0 {
				return bytes.TrimSpace(bytes.ReplaceAll(b, []byte(" "), nil)) // compacted: under the limit
			}
			return b
		})},
	{name: "off by one at the limit", check: "size/at-limit-accepted", mention: "answered 413",
		opts: []inventory.Option{inventory.WithMaxBodyBytes(inventory.DefaultMaxBodyBytes - 1)}},
	// body
	{name: "reads an empty body as {}", check: "body/empty", mention: `code "missing_field"`,
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodPatch && len(bytes.TrimSpace(b)) == 0 && r.Header.Get("Content-Type") == "application/json" {
				return []byte("{}")
			}
			return b
		})},
	{name: "500 for invalid JSON", check: "body/invalid-json", mention: "answered 500",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if bytes.Contains(rec.body, []byte(`"invalid_json"`)) {
				rec.setError(500, "internal", "internal error; the server logged the details")
			}
		})},
	{name: "replaces invalid UTF-8", check: "body/invalid-utf8", mention: `code "unknown_field"`,
		wrap: onRequest(func(_ *http.Request, b []byte) []byte { return []byte(strings.ToValidUTF8(string(b), "\uFFFD")) })},
	{name: "422 for an array body", check: "body/not-an-object", mention: "answered 422",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if bytes.HasPrefix(b, []byte("[")) {
					errorAnswer(w, 422, "invalid_json", "the body must be an object")
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				next.ServeHTTP(w, r)
			})
		}},
	{name: "ignores trailing data", check: "body/trailing-data", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			var first json.RawMessage
			if r.Method == http.MethodPatch && json.NewDecoder(bytes.NewReader(b)).Decode(&first) == nil {
				return first
			}
			return b
		})},
	{name: "accepts duplicate members", check: "body/duplicate-member", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			var m map[string]any // encoding/json: the last duplicate wins
			if r.Method == http.MethodPatch && json.Unmarshal(b, &m) == nil {
				if q, ok := m["quantity"]; ok {
					nb, _ := json.Marshal(map[string]any{"quantity": q})
					return nb
				}
			}
			return b
		})},
	{name: "ignores unknown members", check: "body/unknown-member", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			var m map[string]json.RawMessage
			if r.Method == http.MethodPatch && json.Unmarshal(b, &m) == nil {
				if q, ok := m["quantity"]; ok {
					return append(append([]byte(`{"quantity":`), q...), '}')
				}
			}
			return b
		})},
	{name: "matches member names case-insensitively", check: "body/member-name-exact", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			var v struct {
				Quantity *json.RawMessage // encoding/json matches "QUANTITY" too
			}
			if r.Method == http.MethodPatch && json.Unmarshal(b, &v) == nil && v.Quantity != nil {
				return append(append([]byte(`{"quantity":`), *v.Quantity...), '}')
			}
			return b
		})},
	{name: "accepts a missing quantity", check: "body/missing-quantity", mention: "answered 200",
		wrap: onRequest(func(r *http.Request, b []byte) []byte {
			if r.Method == http.MethodPatch && string(bytes.ReplaceAll(b, []byte(" "), nil)) == "{}" {
				return []byte(`{"quantity":0}`)
			}
			return b
		})},
	{name: `accepts "5" as quantity`, check: "body/quantity-not-integer", mention: "answered 200",
		wrap: onRequest(func(_ *http.Request, b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"quantity":"5"`), []byte(`"quantity":5`))
		})},
	{name: "clamps a negative quantity", check: "body/quantity-out-of-range", mention: "answered 200",
		wrap: onRequest(func(_ *http.Request, b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"quantity":-1`), []byte(`"quantity":0`))
		})},
	{name: "rejects 17.0", check: "body/whole-number-forms", mention: "answered 400",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			fraction := regexp.MustCompile(`"quantity"\s*:\s*-?\d+[.eE]`)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if fraction.Match(b) {
					errorAnswer(w, 400, "invalid_field", "quantity must be an integer")
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				next.ServeHTTP(w, r)
			})
		}},
	{name: "rejects the maximum quantity", check: "body/quantity-bounds", mention: "answered 400",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if m := quantityRE.FindSubmatch(b); m != nil && string(m[1]) == "2147483647" {
					errorAnswer(w, 400, "invalid_field", "quantity must be below 2147483647")
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				next.ServeHTTP(w, r)
			})
		}},
	// update
	{name: "sets status to sold", check: "update/ok", mention: `status "sold", not`,
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if r.Method == http.MethodPatch && rec.status == 200 {
				rec.body = regexp.MustCompile(`"status":"[a-z]+"`).ReplaceAll(rec.body, []byte(`"status":"sold"`))
			}
		})},
	{name: "adds instead of replacing", check: "update/replaces", mention: "the update sets the new count", unrestorable: true,
		wrap: func(api *inventory.API, next http.Handler) http.Handler {
			return onRequest(func(r *http.Request, b []byte) []byte {
				id, ok := petID(r)
				m := quantityRE.FindSubmatch(b)
				if !ok || m == nil {
					return b
				}
				it, ok := listed(api, r, id)
				q, _ := strconv.Atoi(string(m[1]))
				if !ok || q == it.Quantity {
					return b
				}
				return fmt.Appendf(nil, `{"quantity":%d}`, it.Quantity+q)
			})(api, next)
		}},
	{name: "serves a stale cached list", check: "update/visible-in-list", mention: "the list shows pet", unrestorable: true,
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			var mu sync.Mutex
			var cached *recorded
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet || r.URL.Path != "/inventory" || r.Header.Get("Authorization") != validAuth {
					next.ServeHTTP(w, r)
					return
				}
				mu.Lock()
				if cached == nil {
					cached = serveRecorded(next, r)
				}
				rec := cached
				mu.Unlock()
				writeRecorded(w, rec)
			})
		}},
	// headers
	{name: "text/plain answers", check: "headers/content-type", mention: "Content-Type: text/plain",
		wrap: onResponse(func(_ *http.Request, rec *recorded) { rec.header.Set("Content-Type", "text/plain; charset=utf-8") })},
	{name: "no Cache-Control", check: "headers/cache-control", mention: "no Cache-Control header",
		wrap: onResponse(func(_ *http.Request, rec *recorded) { rec.header.Del("Cache-Control") })},
	// A list marked stale through an outage must be at most as old as
	// the bound it declares: this one says it is older.
	{name: "marks a list stale with an Age beyond its stale-if-error", check: "headers/stale-if-error", mention: "older than the stale-if-error=30",
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if r.URL.Path == "/inventory" && (rec.status == http.StatusOK || rec.status == http.StatusNotModified) {
				rec.header.Set("Cache-Control", "private, no-cache, stale-if-error=30")
				rec.header.Set("Cache-Status", "petinventory; fwd=stale; fwd-status=503")
				rec.header.Set("Age", "45")
			}
		})},
	{name: "no nosniff", check: "headers/nosniff", mention: "no X-Content-Type-Options header",
		wrap: onResponse(func(_ *http.Request, rec *recorded) { rec.header.Del("X-Content-Type-Options") })},
	// errors
	{name: "adds a member to Error", check: "errors/body-shape", mention: `"details"`,
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.status >= 400 {
				rec.editError(func(m map[string]any) { m["details"] = "see the docs" })
			}
		})},
	{name: "Error status differs from the HTTP status", check: "errors/body-shape", mention: "does not repeat the HTTP status",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.status == 404 {
				rec.editError(func(m map[string]any) { m["status"] = 400 })
			}
		})},
	{name: "wrong code for a case", check: "errors/body-shape", mention: `code "invalid_json", not "missing_field"`,
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			rec.body = bytes.ReplaceAll(rec.body, []byte(`"missing_field"`), []byte(`"invalid_json"`))
		})},
	{name: "vague messages", check: "errors/message-names-fault", mention: "does not name",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if rec.status >= 400 {
				rec.editError(func(m map[string]any) { m["message"] = "bad request" })
			}
		})},
	{name: "echoes the key in a message", check: "errors/key-never-echoed", mention: "echoes the API key",
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if rec.status == 401 {
				rec.editError(func(m map[string]any) { m["message"] = "invalid credentials: " + r.Header.Get("Authorization") })
			}
		})},
	{name: "echoes a wrong key", check: "errors/key-never-echoed", mention: "echoes the wrong key",
		wrap: onResponse(func(r *http.Request, rec *recorded) {
			if rec.status == 401 && r.Header.Get("Authorization") == "Bearer "+wrongKeyOfSuite {
				rec.editError(func(m map[string]any) { m["message"] = "unknown key " + wrongKeyOfSuite })
			}
		})},
	{name: "no WWW-Authenticate (document)", check: "openapi/responses", mention: "no WWW-Authenticate header",
		wrap: onResponse(func(_ *http.Request, rec *recorded) { rec.header.Del("WWW-Authenticate") })},
	{name: "answers 422, a status the document does not have", check: "openapi/responses", mention: "not documented",
		wrap: onResponse(func(_ *http.Request, rec *recorded) {
			if bytes.Contains(rec.body, []byte(`"invalid_field"`)) {
				rec.setError(422, "invalid_field", "quantity must be an integer")
			}
		})},
	// concurrency
	{name: "loses concurrent updates", check: "concurrency/parallel-updates", mention: "quantity", wrap: losesConcurrentUpdates},
	{name: "reads the answer back after its write", check: "concurrency/parallel-updates", mention: "quantity", wrap: readsBackLater},
	// an answer from something in front of the API
	{name: "a router's plain 404 for other methods", check: "routes/unknown-methods", mention: "this 404 came from something in front of the API (router or proxy): the body is `404 page not found`, not an Error",
		wrap: func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions:
					next.ServeHTTP(w, r)
				default:
					http.NotFound(w, r)
				}
			})
		}},
}

// wrongKeyOfSuite is the wrong key the suite sends.
const wrongKeyOfSuite = "conformance-wrong-key-5e0c1d2a9f7b4c8e"

// losesConcurrentUpdates answers each update with what the store holds a
// moment after the write, not with the write itself: a read after write
// that is not atomic with it. Each update waits (at most half a second)
// for the next one to be written before reading, so that with parallel
// updates every answer but the last carries another request's value.
func losesConcurrentUpdates(api *inventory.API, next http.Handler) http.Handler {
	var mu sync.Mutex
	latest := make(chan struct{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := petID(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		rec := serveRecorded(next, r)
		if rec.status != http.StatusOK {
			writeRecorded(w, rec)
			return
		}
		mine := make(chan struct{})
		mu.Lock()
		prev := latest
		latest = mine
		mu.Unlock()
		close(prev) // the previous writer may read now
		select {
		case <-mine:
		case <-time.After(500 * time.Millisecond):
		}
		if it, ok := listed(api, r, id); ok {
			rec.body, _ = json.Marshal(it)
		}
		writeRecorded(w, rec)
	})
}

// readsBackLater answers an update with what the store holds half a
// millisecond after the API wrote it: the write and the read of the
// answer are not one atomic step, so another update can land between.
func readsBackLater(api *inventory.API, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := petID(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		rec := serveRecorded(next, r)
		if rec.status == http.StatusOK {
			time.Sleep(500 * time.Microsecond) // the server under test's window, not a wait of the test
			if it, ok := listed(api, r, id); ok {
				rec.body, _ = json.Marshal(it)
			}
		}
		writeRecorded(w, rec)
	})
}

// TestLostUpdateCaughtEveryRun: the read-back that is not atomic with its
// write is caught by the concurrency check in every one of 20 runs.
func TestLostUpdateCaughtEveryRun(t *testing.T) {
	const runs = 20
	bc := brokenCaseNamed(t, "reads the answer back after its write")
	base, store := serveBroken(t, bc)
	for i := range runs {
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey, Run: "^concurrency/parallel-updates$"})
		if err != nil {
			t.Fatal(err)
		}
		if res, _ := rep.Result("concurrency/parallel-updates"); res.Outcome != conformancetest.Fail {
			t.Errorf("run %d of %d: not caught (%s); %s", i+1, runs, res.Outcome, res.Detail)
		}
	}
	if got := listStore(t, store); !slices.Equal(got, seed) {
		t.Errorf("the suite did not restore the store: %v", got)
	}
}

// notFoundBeforeAuth answers 404 for a pet the list does not show before
// the API looks at the key: the leak the auth-ordering checks catch.
func notFoundBeforeAuth(api *inventory.API, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := petID(r); ok {
			if _, ok := listed(api, r, id); !ok {
				errorAnswer(w, 404, "not_found", "no such pet")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
