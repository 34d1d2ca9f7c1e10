package wire

import (
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// The rules of the project's OpenAPI document (inventory/openapi.yaml in
// the petinventory repository) that the checks apply to every response.
// They are written out here because this package imports nothing from the
// repository. The module's testdata/openapi-rules.json holds what an OpenAPI library
// reads in the document (a test in the repository's internal/e2e module
// derives it from the document and compares); TestOpenAPIRules proves
// that these tables and ValidateResponseBody agree with that file.

// Operation identifiers, as the OpenAPI document names them.
const (
	ListInventory   = "listInventory"   // GET {base}/inventory
	HeadInventory   = "headInventory"   // HEAD {base}/inventory
	UpdateInventory = "updateInventory" // PATCH {base}/inventory/{petId}
	// OtherMethodOp is any other method on one of the two paths, answered
	// with the document's MethodNotAllowed response.
	OtherMethodOp = "otherMethod"
)

// Documented lists the statuses the document gives each operation.
var Documented = map[string][]int{
	ListInventory:   {200, 304, 401, 500, 503},
	HeadInventory:   {200, 304, 401, 500, 503},
	UpdateInventory: {200, 400, 401, 404, 408, 413, 415, 500, 503},
	OtherMethodOp:   {405},
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

// DocumentedStatuses returns the statuses the OpenAPI document gives an
// operation (ListInventory, UpdateInventory or OtherMethodOp), ascending; nil
// for an unknown operation.
func DocumentedStatuses(operationID string) []int {
	return slices.Clone(Documented[operationID])
}

// RequiredHeaders returns the headers the document requires on a response
// of the operation with the given status, sorted.
func RequiredHeaders(operationID string, status int) []string {
	var h []string
	switch {
	case status == 304:
		h = slices.Clone(notModifiedHeaders)
	case status == 200 && operationID == ListInventory:
		h = append(slices.Clone(everyResponseHeaders), listHeaders...)
	case operationID == HeadInventory:
		// The GET's headers, but no body: no Content-Type; the 200 gives
		// the length the GET's body has.
		h = slices.DeleteFunc(RequiredHeaders(ListInventory, status), func(n string) bool { return n == "Content-Type" })
		if status == 200 {
			h = append(h, "Content-Length")
		}
	default:
		h = append(slices.Clone(everyResponseHeaders), statusHeaders[status]...)
	}
	sort.Strings(h)
	return h
}

// ValidateResponseBody checks a response body against the schema the
// OpenAPI document gives the operation and status: an array of
// InventoryItem for a listInventory 200, one InventoryItem for an
// updateInventory 200, and an Error whose code goes with the status
// otherwise. A status the operation does not document is an error.
func ValidateResponseBody(operationID string, status int, body []byte) error {
	statuses, ok := Documented[operationID]
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
	v, err := DecodeJSON(body)
	if err != nil {
		return err
	}
	switch {
	case status == 200 && operationID == ListInventory:
		return ValidateItemList(v, true)
	case status == 200:
		return ValidateItem(v, true)
	}
	return ValidateError(v, status, true)
}

// ValidateItemList checks an array of InventoryItem (see ValidateItem).
func ValidateItemList(v any, strict bool) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("the body is %s, not an array of InventoryItem", Describe(v))
	}
	for i, it := range arr {
		if err := ValidateItem(it, strict); err != nil {
			return fmt.Errorf("item %d: %v", i, err)
		}
	}
	return nil
}

var (
	minInt64 = big.NewInt(-1 << 63)
	maxInt64 = big.NewInt(1<<63 - 1)
)

// ValidateItem checks an InventoryItem. strict adds what the project's
// document says beyond the spec: no other member, quantity in
// 0..2147483647.
func ValidateItem(v any, strict bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("an InventoryItem must be an object, not %s", Describe(v))
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
	id, ok := IntegerValue(obj["petId"])
	if !ok || id.Cmp(minInt64) < 0 || id.Cmp(maxInt64) > 0 {
		return fmt.Errorf("InventoryItem petId %s is not a 64-bit integer", Describe(obj["petId"]))
	}
	q, ok := IntegerValue(obj["quantity"])
	if !ok {
		return fmt.Errorf("InventoryItem quantity %s is not an integer", Describe(obj["quantity"]))
	}
	if strict && (q.Sign() < 0 || q.Cmp(big.NewInt(2147483647)) > 0) {
		return fmt.Errorf("InventoryItem quantity %s is outside 0..2147483647", q)
	}
	s, ok := obj["status"].(string)
	if !ok || (s != "available" && s != "pending" && s != "sold") {
		return fmt.Errorf("InventoryItem status %s is not one of available, pending, sold", Describe(obj["status"]))
	}
	return nil
}

// ValidateError checks an Error body answered with HTTP status.
func ValidateError(v any, status int, strict bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("an Error body must be an object, not %s", Describe(v))
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
		return fmt.Errorf("the Error code %s is not a string", Describe(obj["code"]))
	}
	msg, ok := obj["message"].(string)
	if !ok {
		return fmt.Errorf("the Error message %s is not a string", Describe(obj["message"]))
	}
	st, ok := IntegerValue(obj["status"])
	if !ok {
		return fmt.Errorf("the Error status %s is not an integer", Describe(obj["status"]))
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

// OperationFor maps a request to the document's operation.
func OperationFor(method, path string) (string, bool) {
	p, _, _ := strings.Cut(path, "?")
	switch {
	case p == "/inventory":
		switch method {
		case http.MethodGet:
			return ListInventory, true
		case http.MethodHead:
			return HeadInventory, true
		}
		return OtherMethodOp, true
	case strings.HasPrefix(p, "/inventory/") && !strings.Contains(p[len("/inventory/"):], "/"):
		if method == http.MethodPatch {
			return UpdateInventory, true
		}
		return OtherMethodOp, true
	}
	return "", false
}
