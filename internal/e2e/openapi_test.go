package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/oasdiff/yaml"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// loadDoc loads and validates inventory.OpenAPI. kin-openapi v0.152.0
// validates OpenAPI 3.1 documents (structure, references, examples
// against their schemas) and validates data with a JSON Schema 2020-12
// validator, which is what this document needs (const, type integer for
// whole numbers).
func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(inventory.OpenAPI())
	if err != nil {
		t.Fatalf("loading inventory/openapi.yaml: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("inventory/openapi.yaml declares openapi %q, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("inventory/openapi.yaml is not a valid OpenAPI 3.1 document: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc := loadDoc(t)
	if got := doc.Paths.Value("/inventory").Get.OperationID; got != "listInventory" {
		t.Errorf("GET /inventory operationId %q, want %q", got, "listInventory")
	}
	if got := doc.Paths.Value("/inventory/{petId}").Patch.OperationID; got != "updateInventory" {
		t.Errorf("PATCH /inventory/{petId} operationId %q, want %q", got, "updateInventory")
	}
	if len(doc.Paths.Map()) != 2 {
		t.Errorf("the document has %d paths, want the two routes", len(doc.Paths.Map()))
	}
	for _, s := range doc.Servers {
		if !strings.HasSuffix(s.URL, "/v1") {
			t.Errorf("server %q does not end with the /v1 version segment", s.URL)
		}
	}
	if ss := doc.Components.SecuritySchemes["bearerAuth"]; ss == nil || ss.Value.Type != "http" || ss.Value.Scheme != "bearer" {
		t.Errorf("components.securitySchemes.bearerAuth is not an http bearer scheme")
	}
	// Each path names the answer to any other method in its
	// x-other-methods extension, the response operation() validates 405s
	// with.
	for path, item := range doc.Paths.Map() {
		other, _ := item.Extensions["x-other-methods"].(map[string]any)
		responses, _ := other["responses"].(map[string]any)
		r405, _ := responses["405"].(map[string]any)
		if ref := r405["$ref"]; ref != "#/components/responses/MethodNotAllowed" {
			t.Errorf("%s: x-other-methods.responses.405 is %v, want a $ref to #/components/responses/MethodNotAllowed", path, r405)
		}
	}
	// Every error response has a schema of its own whose code is a string
	// enum, not an allOf narrowing of a shared schema: generators make a
	// typed code of the one and an untyped value of the other.
	for name, r := range doc.Components.Responses {
		if name == "NotModified" {
			continue
		}
		s := r.Value.Content.Get("application/json").Schema
		if s.Ref == "" || len(s.Value.AllOf) > 0 {
			t.Errorf("response %s: the schema is not a $ref to a plain object schema", name)
			continue
		}
		code := s.Value.Properties["code"]
		if code == nil || code.Ref == "" || !code.Value.Type.Is("string") || len(code.Value.Enum) == 0 {
			t.Errorf("response %s: code is not a $ref to a string enum schema", name)
		}
	}
}

// operation returns the operation a request is answered by: the
// document's own for GET /inventory and PATCH /inventory/{petId}, and for
// any other method a stand-in whose only response is the document's
// MethodNotAllowed.
func operation(doc *openapi3.T, method, path string) (*openapi3.Operation, string) {
	p, _, _ := strings.Cut(path, "?")
	list := p == "/inventory"
	switch {
	case list && method == http.MethodGet:
		return doc.Paths.Value("/inventory").Get, "/inventory"
	case list && method == http.MethodHead:
		return doc.Paths.Value("/inventory").Head, "/inventory"
	case !list && method == http.MethodPatch:
		return doc.Paths.Value("/inventory/{petId}").Patch, "/inventory/{petId}"
	}
	responses := openapi3.NewResponses()
	responses.Delete("default")
	responses.Set("405", &openapi3.ResponseRef{Value: doc.Components.Responses["MethodNotAllowed"].Value})
	return &openapi3.Operation{OperationID: "otherMethod", Responses: responses}, p
}

// validate validates one answer with kin-openapi's openapi3filter: the
// status must be documented, the headers and the body must match.
func validate(doc *openapi3.T, req *http.Request, path string, status int, header http.Header, body []byte) error {
	op, tmpl := operation(doc, req.Method, path)
	route := &routers.Route{Spec: doc, Path: tmpl, Method: req.Method, Operation: op}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// captured is one request the suite sent and the answer it got.
type captured struct {
	req    *http.Request
	status int
	header http.Header
	body   []byte
}

// capturing is an http.RoundTripper that records every answer.
type capturing struct {
	mu  sync.Mutex
	all []captured
}

// CloseIdleConnections lets the suite close the pooled connections.
func (c *capturing) CloseIdleConnections() {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

func (c *capturing) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	c.mu.Lock()
	c.all = append(c.all, captured{req: r, status: resp.StatusCode, header: resp.Header.Clone(), body: b})
	c.mu.Unlock()
	return resp, nil
}

// TestOpenAPIResponses runs the whole contract suite over every transport
// and validates every answer it provoked against the OpenAPI document
// with kin-openapi, independently of the suite's own validator.
func TestOpenAPIResponses(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			doc := loadDoc(t)
			base := tr.serve(t, nil, newAPI(t, openMemory(t, seed...)))
			capt := &capturing{}
			rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{
				BaseURL: base, APIKey: testKey, HTTPClient: &http.Client{Transport: capt},
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failed() {
				t.Fatalf("the suite failed against the real API: %s", rep.Summary())
			}
			listCachingRequests(t, &http.Client{Transport: capt}, base)
			// The router proves that the document's paths match the URLs
			// served (the base with /v1 as the server).
			doc.Servers = openapi3.Servers{{URL: base}}
			router, err := gorillamux.NewRouter(doc)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]int{}
			routed := 0
			for _, c := range capt.all {
				path := strings.TrimPrefix(c.req.URL.Path, strings.TrimPrefix(base, "http://"+c.req.URL.Host))
				if r, _, err := router.FindRoute(c.req); err == nil {
					routed++
					if r.Operation == nil || !strings.HasPrefix(path, "/inventory") {
						t.Errorf("%s %s: routed to an unexpected route %v", c.req.Method, c.req.URL, r.Path)
					}
				} else if !errors.Is(err, routers.ErrMethodNotAllowed) && !errors.Is(err, routers.ErrPathNotFound) {
					t.Errorf("%s %s: router: %v", c.req.Method, c.req.URL, err)
				}
				if c.req.Method == http.MethodHead {
					seen[c.status]++ // no body; openapi3filter skips HEAD
					continue
				}
				body := c.body
				if c.header.Get("Content-Encoding") == "gzip" {
					zr, err := gzip.NewReader(bytes.NewReader(c.body))
					if err == nil {
						body, err = io.ReadAll(zr)
					}
					if err != nil {
						t.Errorf("%s %s → %d: Content-Encoding gzip, but the body does not decode: %v", c.req.Method, c.req.URL, c.status, err)
						continue
					}
				}
				if err := validate(doc, c.req, path, c.status, c.header, body); err != nil {
					t.Errorf("%s %s → %d %s\ndoes not match inventory/openapi.yaml: %v", c.req.Method, c.req.URL, c.status, c.body, err)
				}
				seen[c.status]++
			}
			for _, st := range []int{200, 304, 400, 401, 404, 405, 413, 415} {
				if seen[st] == 0 {
					t.Errorf("the suite provoked no %d answer; the validation covers less than it should", st)
				}
			}
			if routed == 0 {
				t.Errorf("the kin-openapi router matched none of %d requests to the document's paths", len(capt.all))
			}
			// A negative control: the same validation rejects a tampered
			// answer, so the loop above is not vacuous.
			for _, c := range capt.all {
				if c.status != http.StatusUnauthorized || c.req.Method == http.MethodHead {
					continue
				}
				path := strings.TrimPrefix(c.req.URL.Path, strings.TrimPrefix(base, "http://"+c.req.URL.Host))
				noCache := c.header.Clone()
				noCache.Del("Cache-Control")
				if validate(doc, c.req, path, c.status, noCache, c.body) == nil {
					t.Errorf("a 401 without Cache-Control validated; the header rules are not applied")
				}
				extra := bytes.Replace(c.body, []byte(`{`), []byte(`{"extra":1,`), 1)
				if validate(doc, c.req, path, c.status, c.header, extra) == nil {
					t.Errorf("a 401 with an extra member validated: %s", extra)
				}
				badChallenge := c.header.Clone()
				badChallenge.Set("WWW-Authenticate", `Basic realm="inventory"`)
				if validate(doc, c.req, path, c.status, badChallenge, c.body) == nil {
					t.Errorf("a 401 with a Basic challenge validated")
				}
				break
			}
			for _, c := range capt.all {
				if c.status != http.StatusOK || c.req.Method != http.MethodGet || c.header.Get("Content-Encoding") != "" {
					continue
				}
				path := strings.TrimPrefix(c.req.URL.Path, strings.TrimPrefix(base, "http://"+c.req.URL.Host))
				if path != "/inventory" {
					continue
				}
				noTag := c.header.Clone()
				noTag.Del("ETag")
				if validate(doc, c.req, path, c.status, noTag, c.body) == nil {
					t.Errorf("a list without ETag validated")
				}
				noStore := c.header.Clone()
				noStore.Set("Cache-Control", "no-store")
				if validate(doc, c.req, path, c.status, noStore, c.body) == nil {
					t.Errorf("a list with Cache-Control: no-store validated")
				}
				break
			}
			t.Logf("%d answers validated (%d routed by the document's paths): %v", len(capt.all), routed, seen)
		})
	}
}

// listCachingRequests sends the list requests the document's caching rules
// are about, through c so that their answers are validated with the rest:
// a list accepting gzip, and conditional lists with the ETag it got and
// with *, which the document answers 304.
func listCachingRequests(t *testing.T, c *http.Client, base string) {
	t.Helper()
	get := func(header ...string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/inventory", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := get("Accept-Encoding", "gzip")
	tag := first.Header.Get("ETag")
	if tag == "" {
		t.Errorf("a list answer has no ETag (headers %v); no conditional list can be sent", first.Header)
		return
	}
	for _, inm := range []string{tag, "*"} {
		if resp := get("Accept-Encoding", "gzip", "If-None-Match", inm); resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s on an unchanged list: %d, want 304", inm, resp.StatusCode)
		}
	}
}

// TestOpenAPIPetIDRange: the document states petId's range as the
// contract's, a signed 64-bit integer (strconv.ParseInt), in the path and
// in an entry, with minimum and maximum: `format: int64` alone is an
// annotation in JSON Schema 2020-12, so generators that do not read it
// (Schemathesis) sent ids past 2^63 and counted the 400 as a failure.
// The bounds are read as exact integers (kin-openapi reads them as
// float64, where 2^63-1 and 2^63 are one number); kin-openapi, a generator
// that reads the document, then refuses the ids just past them in the path
// and takes those at them.
func TestOpenAPIPetIDRange(t *testing.T) {
	js, err := yaml.YAMLToJSON(inventory.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var raw struct {
		Paths map[string]struct {
			Parameters []struct {
				Name   string
				Schema map[string]any
			}
		}
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any
			}
		}
	}
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{"components/schemas/InventoryItem/properties/petId": raw.Components.Schemas["InventoryItem"].Properties["petId"]}
	for _, p := range raw.Paths["/inventory/{petId}"].Parameters {
		if p.Name == "petId" {
			schemas["paths/~1inventory~1{petId}/parameters/petId/schema"] = p.Schema
		}
	}
	if len(schemas) != 2 {
		t.Fatalf("the document has no petId path parameter")
	}
	for where, s := range schemas {
		for key, want := range map[string]string{"minimum": strconv.FormatInt(math.MinInt64, 10), "maximum": strconv.FormatInt(math.MaxInt64, 10)} {
			if got, ok := s[key].(json.Number); !ok || string(got) != want {
				t.Errorf("%s: %s is %v, want %s (the contract's petId: a signed 64-bit integer)", where, key, s[key], want)
			}
		}
	}

	doc := loadDoc(t)
	op, tmpl := operation(doc, http.MethodPatch, "/inventory/1")
	for _, id := range []string{"9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809"} {
		_, perr := strconv.ParseInt(id, 10, 64)
		req, _ := http.NewRequest(http.MethodPatch, "http://example.test/v1/inventory/"+id, nil)
		err := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
			Request: req, PathParams: map[string]string{"petId": id},
			Route:   &routers.Route{Spec: doc, Path: tmpl, PathItem: doc.Paths.Value(tmpl), Method: http.MethodPatch, Operation: op},
			Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		})
		if (err == nil) != (perr == nil) {
			t.Errorf("petId %s in the path: the document says %v, the contract (strconv.ParseInt) %v", id, err, perr)
		}
	}
}
