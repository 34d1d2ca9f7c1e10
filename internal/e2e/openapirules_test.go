package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
)

var updateOpenAPIRules = flag.Bool("update-openapi-rules", false, "rewrite conformancetest/testdata/openapi-rules.json from inventory/openapi.yaml")

// openAPIRulesFile is where conformancetest keeps what the document says,
// for its own test (it may not import this repository or kin-openapi).
var openAPIRulesFile = filepath.Join("..", "..", "conformancetest", "testdata", "openapi-rules.json")

// openAPIRules is what kin-openapi reads in the document: per operation
// its statuses and the headers each requires, and its verdict on a corpus
// of good and bad bodies for every status.
type openAPIRules struct {
	Operations []openAPIRuleOp   `json:"operations"`
	Bodies     []openAPIRuleBody `json:"bodies"`
}

type openAPIRuleOp struct {
	OperationID     string              `json:"operationId"`
	Method          string              `json:"method"`
	Path            string              `json:"path"`
	Statuses        []int               `json:"statuses"`
	RequiredHeaders map[string][]string `json:"requiredHeaders"`
}

type openAPIRuleBody struct {
	OperationID string `json:"operationId"`
	Status      int    `json:"status"`
	Body        string `json:"body"`
	Valid       bool   `json:"valid"`
}

// TestOpenAPIRulesFile proves that conformancetest/testdata/openapi-rules.json
// is what inventory/openapi.yaml says; conformancetest's TestOpenAPIRules
// proves that the rules the suite embeds agree with that file. Run with
// go test . -run TestOpenAPIRulesFile -args -update-openapi-rules after
// changing the document.
func TestOpenAPIRulesFile(t *testing.T) {
	doc := loadDoc(t)
	var rules openAPIRules
	allStatuses := []int{200, 304, 400, 401, 404, 405, 408, 413, 415, 500, 503}
	for _, o := range []struct{ id, method, path string }{
		{"listInventory", http.MethodGet, "/inventory"},
		{"headInventory", http.MethodHead, "/inventory"},
		{"updateInventory", http.MethodPatch, "/inventory/1"},
		{"otherMethod", http.MethodDelete, "/inventory"},
	} {
		op, _ := operation(doc, o.method, o.path)
		ro := openAPIRuleOp{OperationID: o.id, Method: o.method, Path: o.path, RequiredHeaders: map[string][]string{}}
		for code := range op.Responses.Map() {
			n, err := strconv.Atoi(code)
			if err != nil {
				t.Errorf("%s: response %q is not a status", o.id, code)
				continue
			}
			ro.Statuses = append(ro.Statuses, n)
		}
		sort.Ints(ro.Statuses)
		for _, st := range ro.Statuses {
			resp := op.Responses.Status(st).Value
			required := []string{}
			for name, h := range resp.Headers {
				if h.Value.Required {
					required = append(required, name)
				}
			}
			if resp.Content.Get("application/json") != nil {
				required = append(required, "Content-Type")
			}
			sort.Strings(required)
			ro.RequiredHeaders[strconv.Itoa(st)] = required
		}
		rules.Operations = append(rules.Operations, ro)
		if o.method == http.MethodHead {
			continue // an answer to HEAD has no body to judge
		}
		req, _ := http.NewRequest(o.method, "http://example.test/v1"+o.path, nil)
		for _, st := range allStatuses {
			if st == 304 && !slices.Contains(ro.Statuses, 304) {
				continue // kin-openapi does not judge an undocumented 304
			}
			accepted, rejected := 0, 0
			for _, body := range rulesCorpus(st) {
				valid := false
				for _, cc := range []string{"no-store", "private, no-cache"} {
					h := rulesHeaders(st)
					h.Set("Cache-Control", cc)
					valid = valid || validate(doc, req, o.path, st, h, []byte(body)) == nil
				}
				rules.Bodies = append(rules.Bodies, openAPIRuleBody{OperationID: o.id, Status: st, Body: body, Valid: valid})
				if valid {
					accepted++
				} else {
					rejected++
				}
			}
			// The corpus must give both verdicts for every documented
			// status with a body, or the comparison proves nothing.
			if slices.Contains(ro.Statuses, st) && st != 304 && (accepted == 0 || rejected == 0) {
				t.Errorf("%s %d: the corpus got %d accepted and %d rejected bodies; it must have both", o.id, st, accepted, rejected)
			}
		}
	}
	got, err := json.MarshalIndent(rules, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateOpenAPIRules {
		if err := os.WriteFile(openAPIRulesFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(openAPIRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what inventory/openapi.yaml says; run go test . -run TestOpenAPIRulesFile -args -update-openapi-rules in internal/e2e, then conformancetest's tests", openAPIRulesFile)
	}
}

// rulesHeaders are headers that the document accepts for status, but
// for Cache-Control, which the caller sets (no-store, or the list's
// private, no-cache).
func rulesHeaders(status int) http.Header {
	h := http.Header{}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if status != 304 {
		h.Set("Content-Type", "application/json")
	}
	switch status {
	case 200, 304:
		h.Set("ETag", `"abc"`)
		h.Set("Vary", "Accept-Encoding")
	case 401:
		h.Set("WWW-Authenticate", `Bearer realm="inventory", error="invalid_token"`)
	case 405:
		h.Set("Allow", "GET, HEAD")
	case 503:
		h.Set("Retry-After", "1")
	}
	return h
}

// rulesCorpus returns bodies, good and bad, for an answer of status. A
// 304 has no body (HTTP's rule, not the document's): only the empty one.
func rulesCorpus(status int) []string {
	if status == 304 {
		return []string{""}
	}
	items := []string{
		`{"petId":1,"quantity":2,"status":"sold"}`,
		`{"petId":-9,"quantity":0,"status":"available"}`,
		`{"petId":1,"quantity":2147483647,"status":"pending"}`,
		`{"petId":1,"quantity":2.0,"status":"sold"}`,
		`{"petId":1,"quantity":2147483648,"status":"sold"}`,
		`{"petId":1,"quantity":-1,"status":"sold"}`,
		`{"petId":1,"quantity":2.5,"status":"sold"}`,
		`{"petId":1,"quantity":"2","status":"sold"}`,
		`{"petId":1,"quantity":null,"status":"sold"}`,
		`{"petId":1.5,"quantity":2,"status":"sold"}`,
		`{"petId":"1","quantity":2,"status":"sold"}`,
		`{"petId":1,"quantity":2,"status":"lost"}`,
		`{"petId":1,"quantity":2,"status":null}`,
		`{"petId":1,"quantity":2}`,
		`{"quantity":2,"status":"sold"}`,
		`{"petId":1,"status":"sold"}`,
		`{"petId":1,"quantity":2,"status":"sold","name":"Rex"}`,
		`{}`, `null`, `[]`, `"x"`, `7`,
	}
	out := slices.Clone(items)
	out = append(out, `[`+items[0]+`,`+items[1]+`]`)
	for _, it := range items {
		out = append(out, `[`+it+`]`)
	}
	codes := []string{"invalid_pet_id", "invalid_json", "missing_field", "invalid_field", "unknown_field", "unauthorized",
		"not_found", "method_not_allowed", "request_timeout", "payload_too_large", "unsupported_media_type", "internal", "unavailable", "teapot"}
	for _, c := range codes {
		out = append(out, fmt.Sprintf(`{"code":%q,"message":"m","status":%d}`, c, status))
	}
	code := map[int]string{400: "invalid_json", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed", 408: "request_timeout",
		413: "payload_too_large", 415: "unsupported_media_type", 503: "unavailable"}[status]
	if code == "" {
		code = "internal"
	}
	out = append(out,
		fmt.Sprintf(`{"code":%q,"message":"m","status":%d.0}`, code, status),
		fmt.Sprintf(`{"code":%q,"message":"m","status":%d}`, code, status+1),
		fmt.Sprintf(`{"code":%q,"message":"m","status":"%d"}`, code, status),
		fmt.Sprintf(`{"code":%q,"message":"","status":%d}`, code, status),
		fmt.Sprintf(`{"code":%q,"message":5,"status":%d}`, code, status),
		fmt.Sprintf(`{"code":%q,"status":%d}`, code, status),
		fmt.Sprintf(`{"message":"m","status":%d}`, status),
		fmt.Sprintf(`{"code":%q,"message":"m"}`, code),
		fmt.Sprintf(`{"code":%q,"message":"m","status":%d,"details":"x"}`, code, status),
		fmt.Sprintf(`{"code":5,"message":"m","status":%d}`, status),
		fmt.Sprintf(`[{"code":%q,"message":"m","status":%d}]`, code, status),
		``,
	)
	return out
}
