package conformancetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The rules of the project's OpenAPI document (inventory/openapi.yaml in
// the petinventory repository) that the checks apply to every response.
// They are written out here because this package imports nothing from the
// repository. testdata/openapi-rules.json holds what an OpenAPI library
// reads in the document (a test in the repository's internal/e2e module
// derives it from the document and compares); TestOpenAPIRules proves
// that these tables and validateResponseBody agree with that file.

// Operation identifiers, as the OpenAPI document names them.
const (
	listInventory   = "listInventory"   // GET {base}/inventory
	headInventory   = "headInventory"   // HEAD {base}/inventory
	updateInventory = "updateInventory" // PATCH {base}/inventory/{petId}
	// otherMethodOp is any other method on one of the two paths, answered
	// with the document's MethodNotAllowed response.
	otherMethodOp = "otherMethod"
)

// documented lists the statuses the document gives each operation.
var documented = map[string][]int{
	listInventory:   {200, 304, 401, 500, 503},
	headInventory:   {200, 304, 401, 500, 503},
	updateInventory: {200, 400, 401, 404, 408, 413, 415, 500, 503},
	otherMethodOp:   {405},
}

// errorCodes maps each error status to the codes its Error body may carry.
var errorCodes = map[int][]string{
	400: {"invalid_pet_id", "invalid_json", "missing_field", "invalid_field", "unknown_field"},
	401: {"unauthorized"},
	404: {"not_found"},
	405: {"method_not_allowed"},
	408: {"request_timeout"},
	413: {"payload_too_large"},
	415: {"unsupported_media_type"},
	500: {"internal"},
	503: {"unavailable"},
}

// statusHeaders are the headers the document requires on a status beyond
// those every response carries.
var statusHeaders = map[int][]string{
	401: {"WWW-Authenticate"},
	405: {"Allow"},
	503: {"Retry-After"},
}

// notModifiedHeaders are the headers a 304 carries: no body, so no
// Content-Type; the validator, Vary and Cache-Control of the list.
var notModifiedHeaders = []string{"Cache-Control", "ETag", "Vary"}

// listHeaders are required on a 200 list beyond those of every answer:
// its validator and the Vary of its negotiated coding.
var listHeaders = []string{"ETag", "Vary"}

// everyResponseHeaders are required on every response but a 304.
var everyResponseHeaders = []string{"Cache-Control", "Content-Type", "X-Content-Type-Options"}

// documentedStatuses returns the statuses the OpenAPI document gives an
// operation (listInventory, updateInventory or otherMethodOp), ascending; nil
// for an unknown operation.
func documentedStatuses(operationID string) []int {
	return slices.Clone(documented[operationID])
}

// requiredHeaders returns the headers the document requires on a response
// of the operation with the given status, sorted.
func requiredHeaders(operationID string, status int) []string {
	var h []string
	switch {
	case status == 304:
		h = slices.Clone(notModifiedHeaders)
	case status == 200 && operationID == listInventory:
		h = append(slices.Clone(everyResponseHeaders), listHeaders...)
	case operationID == headInventory:
		// The GET's headers, but no body: no Content-Type; the 200 gives
		// the length the GET's body has.
		h = slices.DeleteFunc(requiredHeaders(listInventory, status), func(n string) bool { return n == "Content-Type" })
		if status == 200 {
			h = append(h, "Content-Length")
		}
	default:
		h = append(slices.Clone(everyResponseHeaders), statusHeaders[status]...)
	}
	sort.Strings(h)
	return h
}

// validateResponseBody checks a response body against the schema the
// OpenAPI document gives the operation and status: an array of
// InventoryItem for a listInventory 200, one InventoryItem for an
// updateInventory 200, and an Error whose code goes with the status
// otherwise. A status the operation does not document is an error.
func validateResponseBody(operationID string, status int, body []byte) error {
	statuses, ok := documented[operationID]
	if !ok {
		return fmt.Errorf("unknown operation %q", operationID)
	}
	if !slices.Contains(statuses, status) {
		return fmt.Errorf("status %d is not documented for %s (documented: %v)", status, operationID, statuses)
	}
	if status == 304 {
		if len(body) > 0 {
			return fmt.Errorf("a 304 answer has a body of %d bytes; it has none", len(body))
		}
		return nil
	}
	v, err := decodeJSON(body)
	if err != nil {
		return err
	}
	switch {
	case status == 200 && operationID == listInventory:
		return validateItemList(v, true)
	case status == 200:
		return validateItem(v, true)
	}
	return validateError(v, status, true)
}

// decodeJSON decodes exactly one JSON value, numbers kept as json.Number.
func decodeJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("the body is empty, not JSON")
		}
		return nil, fmt.Errorf("the body is not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("the body holds data after its JSON value")
	}
	return v, nil
}

func validateItemList(v any, strict bool) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("the body is %s, not an array of InventoryItem", describe(v))
	}
	for i, it := range arr {
		if err := validateItem(it, strict); err != nil {
			return fmt.Errorf("item %d: %v", i, err)
		}
	}
	return nil
}

var (
	minInt64 = big.NewInt(-1 << 63)
	maxInt64 = big.NewInt(1<<63 - 1)
)

// validateItem checks an InventoryItem. strict adds what the project's
// document says beyond the spec: no other member, quantity in
// 0..2147483647.
func validateItem(v any, strict bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("an InventoryItem must be an object, not %s", describe(v))
	}
	for _, name := range []string{"petId", "quantity", "status"} {
		if _, ok := obj[name]; !ok {
			return fmt.Errorf("InventoryItem has no %s member", name)
		}
	}
	if strict {
		if extra := extraMembers(obj, "petId", "quantity", "status"); extra != "" {
			return fmt.Errorf("InventoryItem has a member the document does not allow: %s", extra)
		}
	}
	id, ok := integerValue(obj["petId"])
	if !ok || id.Cmp(minInt64) < 0 || id.Cmp(maxInt64) > 0 {
		return fmt.Errorf("InventoryItem petId %s is not a 64-bit integer", describe(obj["petId"]))
	}
	q, ok := integerValue(obj["quantity"])
	if !ok {
		return fmt.Errorf("InventoryItem quantity %s is not an integer", describe(obj["quantity"]))
	}
	if strict && (q.Sign() < 0 || q.Cmp(big.NewInt(2147483647)) > 0) {
		return fmt.Errorf("InventoryItem quantity %s is outside 0..2147483647", q)
	}
	s, ok := obj["status"].(string)
	if !ok || (s != "available" && s != "pending" && s != "sold") {
		return fmt.Errorf("InventoryItem status %s is not one of available, pending, sold", describe(obj["status"]))
	}
	return nil
}

// validateError checks an Error body answered with HTTP status.
func validateError(v any, status int, strict bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("an Error body must be an object, not %s", describe(v))
	}
	for _, name := range []string{"code", "message", "status"} {
		if _, ok := obj[name]; !ok {
			return fmt.Errorf("the Error body has no %s member", name)
		}
	}
	if strict {
		if extra := extraMembers(obj, "code", "message", "status"); extra != "" {
			return fmt.Errorf("the Error body has a member the document does not allow: %s", extra)
		}
	}
	code, ok := obj["code"].(string)
	if !ok {
		return fmt.Errorf("the Error code %s is not a string", describe(obj["code"]))
	}
	msg, ok := obj["message"].(string)
	if !ok {
		return fmt.Errorf("the Error message %s is not a string", describe(obj["message"]))
	}
	st, ok := integerValue(obj["status"])
	if !ok {
		return fmt.Errorf("the Error status %s is not an integer", describe(obj["status"]))
	}
	if !st.IsInt64() || st.Int64() != int64(status) {
		return fmt.Errorf("the Error status %s does not repeat the HTTP status %d", st, status)
	}
	if strict {
		if msg == "" {
			return fmt.Errorf("the Error message is empty")
		}
		if codes := errorCodes[status]; !slices.Contains(codes, code) {
			return fmt.Errorf("the Error code %q does not go with status %d (allowed: %s)", code, status, strings.Join(codes, ", "))
		}
	}
	return nil
}

func extraMembers(obj map[string]any, allowed ...string) string {
	var extra []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			extra = append(extra, fmt.Sprintf("%q", k))
		}
	}
	sort.Strings(extra)
	return strings.Join(extra, ", ")
}

// integerValue reports whether v is a JSON number with a whole value (as in
// JSON Schema, 5.0 is an integer) and returns it, exactly.
func integerValue(v any) (*big.Int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	// A huge exponent would make big.Rat compute a huge power: decide
	// those without it. The value is zero, a fraction, or far out of any
	// range this package checks.
	if i := strings.IndexAny(string(n), "eE"); i >= 0 {
		exp, err := strconv.ParseInt(string(n[i+1:]), 10, 32)
		if err != nil || exp > 1000 || exp < -1000 {
			mant := strings.TrimLeft(string(n[:i]), "-")
			if strings.Trim(mant, "0.") == "" {
				return new(big.Int), true
			}
			if err == nil && exp < 0 || strings.HasPrefix(string(n[i+1:]), "-") {
				return nil, false
			}
			huge := new(big.Int).Lsh(big.NewInt(1), 4096)
			if strings.HasPrefix(string(n), "-") {
				huge.Neg(huge)
			}
			return huge, true
		}
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() {
		return nil, false
	}
	return r.Num(), true
}

// describe names a decoded JSON value for a message, shortly.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("%t (a boolean)", x)
	case json.Number:
		return string(x)
	case string:
		return fmt.Sprintf("%s (a string)", shorten(fmt.Sprintf("%q", x), 60))
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
