package inventory

// Fuzz targets for the three parsers that read what a client sends: the
// update body, the petId path segment and the Authorization header. Each
// is held to an independent oracle written here from docs/CONTRACT.md with
// encoding/json, math/big and regexp, so that a fuzzer-found disagreement
// is a bug in one of the two. CI runs each briefly; run one longer with
//
//	go test ./inventory -run='^$' -fuzz='^FuzzParseUpdate$' -fuzztime=10m
//
// and commit any new file under testdata/fuzz/<FuzzName>/ as a regression
// seed once the bug it shows is fixed.

import (
	"bytes"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// ---- the body ----

// oracleUpdate decides an update body by the written rules, independently
// of package inventory's parser: encoding/json for syntax and decoding,
// json.Decoder.Token for duplicate names and depth, math/big for the exact
// value of the number. It returns the quantity or the code. decided is
// false only for inputs past what it can judge cheaply (never for inputs a
// fuzzer produces).
func oracleUpdate(body []byte) (qty int64, code Code, decided bool) {
	// 1. invalid_json: empty, invalid UTF-8, invalid JSON (which covers
	// trailing data and control characters), not an object, a duplicate
	// name in any object, too deep.
	trimmed := bytes.Trim(body, " \t\r\n")
	if len(trimmed) == 0 || !utf8.Valid(body) || !json.Valid(body) || trimmed[0] != '{' {
		return 0, CodeInvalidJSON, true
	}
	if duplicateOrTooDeep(body, 64) {
		return 0, CodeInvalidJSON, true
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return 0, CodeInvalidJSON, true
	}
	// 2. unknown_field, 3. missing_field.
	for name := range m {
		if name != "quantity" {
			return 0, CodeUnknownField, true
		}
	}
	v, present := m["quantity"]
	if !present {
		return 0, CodeMissingField, true
	}
	// 4. invalid_field unless a number whose exact value is an integer in
	// 0..MaxQuantity.
	n, isNumber := v.(json.Number)
	if !isNumber {
		return 0, CodeInvalidField, true
	}
	q, valid, decided := exactQuantity(string(n))
	if !valid {
		return 0, CodeInvalidField, decided
	}
	return q, "", decided
}

// duplicateOrTooDeep walks the tokens of a valid JSON text and reports
// whether an object holds a name twice (names as decoded by encoding/json)
// or containers nest deeper than maxDepth.
func duplicateOrTooDeep(body []byte, maxDepth int) bool {
	type frame struct {
		object  bool
		wantKey bool
		names   map[string]bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return true // not reached for a json.Valid text
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.object && top.wantKey {
			name := tok.(string)
			if top.names[name] {
				return true
			}
			top.names[name] = true
			top.wantKey = false
			continue
		}
		if top != nil && top.object {
			top.wantKey = true // after this value, a name
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			stack = append(stack, &frame{object: d == '{', wantKey: true, names: map[string]bool{}})
			if len(stack) > maxDepth {
				return true
			}
		}
	}
}

var jsonNumber = regexp.MustCompile(`^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// exactQuantity reports whether the JSON number num is exactly an integer
// in 0..MaxQuantity, and which one, with math/big.Rat.
func exactQuantity(num string) (q int64, valid, decided bool) {
	m := jsonNumber.FindStringSubmatch(num)
	if m == nil {
		return 0, false, false
	}
	mantissa := m[2] + m[3]
	if strings.Trim(mantissa, "0") == "" {
		return 0, true, true // zero, whatever its sign and exponent
	}
	// math/big refuses exponents past a million. With L mantissa digits,
	// a nonzero value with exponent e > L+11 is at least 10^11 and one
	// with e < -(L+11) is below 1: neither is valid, and no Rat is needed.
	bound := int64(len(mantissa) + 11)
	e, err := strconv.ParseInt(m[4], 10, 64)
	if m[4] != "" && (err != nil || e > bound || e < -bound) {
		if len(mantissa) > 100_000 {
			return 0, false, false
		}
		return 0, false, true
	}
	r, parsed := new(big.Rat).SetString(num)
	if !parsed {
		return 0, false, false
	}
	if !r.IsInt() || r.Sign() < 0 || r.Cmp(big.NewRat(MaxQuantity, 1)) > 0 {
		return 0, false, true
	}
	return r.Num().Int64(), true, true
}

var bodyCodes = map[Code]bool{
	CodeInvalidJSON:  true,
	CodeUnknownField: true,
	CodeMissingField: true,
	CodeInvalidField: true,
}

func FuzzParseUpdate(f *testing.F) {
	for _, s := range []string{
		`{"quantity":5}`, `{"quantity":0}`, `{"quantity":2147483647}`, `{"quantity":2147483648}`,
		`{"quantity":2147483647.0}`, `{"quantity":21474836470e-1}`, `{"quantity":0.5e1}`,
		`{"quantity":1e400}`, `{"quantity":1e-400}`, `{"quantity":-0}`, `{"quantity":-0.0}`,
		`{"quantity":5.000000000000000000001}`, `{"quantity":05}`, `{"quantit\u0079":5}`,
		`{"quantity":5,"quantit\u0079":6}`, `{"a":{"b":1,"b":2},"quantity":5}`, `{"status":"sold"}`,
		`{}`, ``, `[]`, `{"quantity":"5"}`, `{"quantity":null}`, "{\"quantity\":5,\"a\":\"\xff\"}",
		`{"quantity":1e99999999999999999999}`, `{"x":[[[[[[[[]]]]]]]],"quantity":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := parseUpdate(body)
		wantQ, wantCode, decided := oracleUpdate(body)
		if !decided {
			t.Skip("beyond the oracle")
		}
		if err != nil {
			if !bodyCodes[err.code] || err.Status() != http.StatusBadRequest {
				t.Fatalf("parseUpdate(%q): code %s status %d is not a body code", body, err.code, err.Status())
			}
			// Messages quote at most 64 bytes of the body, which %q may
			// escape to 4 bytes each: short, whatever the body.
			if !utf8.ValidString(err.message) || len(err.message) > 512 {
				t.Fatalf("parseUpdate(%q): message not short valid UTF-8: %q", body, err.message)
			}
			if err.code != wantCode {
				t.Fatalf("parseUpdate(%q) = %s (%s); oracle says %q (quantity %d)", body, err.code, err.message, wantCode, wantQ)
			}
			return
		}
		if wantCode != "" {
			t.Fatalf("parseUpdate(%q) = %d; oracle says %s", body, q, wantCode)
		}
		if int64(q) != wantQ {
			t.Fatalf("parseUpdate(%q) = %d; the body spells %d", body, q, wantQ)
		}
	})
}

// ---- the petId ----

var petIDSyntax = regexp.MustCompile(`^[+-]?[0-9]+$`)

var (
	minInt64 = big.NewInt(-1 << 63)
	maxInt64 = big.NewInt(1<<63 - 1)
)

// oraclePetID: optional sign, decimal digits, and a value in int64's range.
func oraclePetID(s string) (int64, bool) {
	if !petIDSyntax.MatchString(s) {
		return 0, false
	}
	n, parsed := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	if !parsed || n.Cmp(minInt64) < 0 || n.Cmp(maxInt64) > 0 {
		return 0, false
	}
	return n.Int64(), true
}

func FuzzParsePetID(f *testing.F) {
	for _, s := range []string{
		"1", "007", "+5", "-5", "0", "-0", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "", "abc", "1.5", "1e3", " 1", "1_000",
		"0x10", "+", "-", "١٢٣", strings.Repeat("9", 100),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parsePetID(s)
		want, valid := oraclePetID(s)
		switch {
		case valid && err != nil:
			t.Fatalf("parsePetID(%q) = %v; want %d", s, err, want)
		case valid && id != want:
			t.Fatalf("parsePetID(%q) = %d; want %d", s, id, want)
		case !valid && err == nil:
			t.Fatalf("parsePetID(%q) = %d; want invalid_pet_id", s, id)
		case !valid && (err.code != CodeInvalidPetID || err.Status() != http.StatusBadRequest):
			t.Fatalf("parsePetID(%q): %s %d; want invalid_pet_id 400", s, err.code, err.Status())
		case !valid && (!utf8.ValidString(err.message) || len(err.message) > 300):
			// At most 40 bytes of the petId, escaped by %q to 4 bytes each.
			t.Fatalf("parsePetID(%q): message not short valid UTF-8: %q", s, err.message)
		}
	})
}

// The oracles are code too: hold them to a few answers worked by hand.
func TestOracles(t *testing.T) {
	for _, c := range []struct {
		num   string
		q     int64
		valid bool
	}{
		{"5", 5, true}, {"0.5e1", 5, true}, {"-0", 0, true}, {"2147483647.0", 2147483647, true},
		{"2147483648", 0, false}, {"1e400", 0, false}, {"1e-400", 0, false}, {"5.5", 0, false},
		{"-1", 0, false}, {"1" + strings.Repeat("0", 40) + "e-40", 1, true},
	} {
		q, valid, decided := exactQuantity(c.num)
		if q != c.q || valid != c.valid || !decided {
			t.Errorf("exactQuantity(%s) = %d, %v, %v; want %d, %v, true", c.num, q, valid, decided, c.q, c.valid)
		}
	}
	for _, c := range []struct {
		body string
		dup  bool
	}{
		{`{"a":1,"b":{"a":1}}`, false}, {`{"a":1,"a":2}`, true}, {`[{"a":1},{"a":1}]`, false},
		{`{"a":[{"b":1,"b":1}]}`, true}, {`{"a\u0062":1,"ab":2}`, true}, {`{"a":{},"b":[],"a":0}`, true},
	} {
		if got := duplicateOrTooDeep([]byte(c.body), 64); got != c.dup {
			t.Errorf("duplicateOrTooDeep(%s) = %v; want %v", c.body, got, c.dup)
		}
	}
	if _, valid := oraclePetID("-9223372036854775809"); valid {
		t.Error("oraclePetID accepts a value below int64's range")
	}
	if id, valid := oraclePetID("+007"); !valid || id != 7 {
		t.Errorf("oraclePetID(+007) = %d, %v", id, valid)
	}
}
