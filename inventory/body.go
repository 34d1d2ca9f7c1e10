package inventory

import (
	"bytes"
	"unicode/utf8"

	"github.com/petinventory/petinventory/inventory/internal/strictjson"
)

// parseUpdate reads the quantity from an update body: exactly one JSON
// object whose only member is "quantity", an integer (a whole-valued number
// such as 5.0 or 5e0 counts, as in JSON Schema) in 0..MaxQuantity.
//
// The checks run in this order and the first failing one decides the code:
// the body is one valid JSON object, UTF-8, with no member name twice in any
// object and nothing after it (invalid_json); it has no member other than
// quantity (unknown_field, naming the first such member); it has quantity
// (missing_field); quantity is an integer in range (invalid_field). Member
// names match exactly: "Quantity" is an unknown member.
//
// It never panics, and allocates only on the error paths and for member
// names written with escapes.
func parseUpdate(body []byte) (quantity int, err *Error) {
	p := strictjson.Parser{B: body}
	p.Space()
	if p.I == len(p.B) {
		return 0, newError(CodeInvalidJSON, `the request body is empty; send a JSON object such as {"quantity": 5}`)
	}
	if !utf8.Valid(body) {
		return 0, newError(CodeInvalidJSON, "the request body is not valid UTF-8")
	}
	if c := p.B[p.I]; c != '{' {
		return 0, newError(CodeInvalidJSON, `the request body must be a JSON object such as {"quantity": 5}, not %s`, describeJSONStart(c))
	}
	var (
		qty, unknown  strictjson.Span
		hasQ, hasUnkn bool
	)
	// The top-level object is level 1 of MaxDepth.
	perr := p.Object(1, func(key, value strictjson.Span) {
		if key.EqualString(p.B, "quantity") {
			qty, hasQ = value, true
		} else if !hasUnkn {
			unknown, hasUnkn = key, true
		}
	})
	if perr != nil {
		return 0, newError(CodeInvalidJSON, "the request body is not valid JSON: %s", perr)
	}
	p.Space()
	if p.I != len(p.B) {
		return 0, newError(CodeInvalidJSON, "the request body has data after the JSON object, at byte %d; send exactly one object", p.I+1)
	}
	if hasUnkn {
		return 0, newError(CodeUnknownField, "unknown member %s in the request body: an update may only hold quantity", strictjson.Quote(unknown.Decode(p.B)))
	}
	if !hasQ {
		return 0, newError(CodeMissingField, `the request body has no quantity member; send {"quantity": <new stock count>}`)
	}
	return parseQuantity(p.B[qty.Start:qty.End])
}

// parseQuantity decides whether the raw JSON value v is an integer in
// 0..MaxQuantity, exactly: the decimal digits are examined, so no float
// rounding can let 2147483647.0000001 or 1e400 through.
func parseQuantity(v []byte) (int, *Error) {
	switch v[0] {
	case '"':
		return 0, newError(CodeInvalidField, "quantity must be an integer, not a string")
	case 't', 'f':
		return 0, newError(CodeInvalidField, "quantity must be an integer, not a boolean")
	case 'n':
		return 0, newError(CodeInvalidField, "quantity must be an integer, not null")
	case '[':
		return 0, newError(CodeInvalidField, "quantity must be an integer, not an array")
	case '{':
		return 0, newError(CodeInvalidField, "quantity must be an integer, not an object")
	}
	// v is a valid JSON number: -?int(.frac)?([eE][+-]?digits)?
	neg := v[0] == '-'
	if neg {
		v = v[1:]
	}
	var intPart, frac, expPart []byte
	i := 0
	for i < len(v) && strictjson.IsDigit(v[i]) {
		i++
	}
	intPart = v[:i]
	if i < len(v) && v[i] == '.' {
		j := i + 1
		for j < len(v) && strictjson.IsDigit(v[j]) {
			j++
		}
		frac = v[i+1 : j]
		i = j
	}
	if i < len(v) {
		expPart = v[i+1:] // after 'e' or 'E'
	}
	// The value is digits × 10^exp, with digits = intPart+frac.
	exp, expHuge := parseExponent(expPart)
	exp -= int64(len(frac))
	// Strip leading zeros (they do not change the value) and trailing zeros
	// (moving them into the exponent), over intPart+frac seen as one string.
	digits := make([]byte, 0, 24)
	if len(intPart)+len(frac) <= cap(digits) {
		digits = append(append(digits, intPart...), frac...)
	} else {
		digits = append(append([]byte(nil), intPart...), frac...)
	}
	digits = bytes.TrimLeft(digits, "0")
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return 0, nil // 0, -0, 0.000e7: zero
	}
	if expHuge < 0 || exp < 0 {
		return 0, newError(CodeInvalidField, "quantity must be an integer; %s has a fractional part", quoteNumber(v, neg))
	}
	if neg {
		return 0, newError(CodeInvalidField, "quantity must be between 0 and %d; %s is negative", MaxQuantity, quoteNumber(v, neg))
	}
	if expHuge > 0 || int64(len(digits))+exp > 10 {
		return 0, newError(CodeInvalidField, "quantity must be between 0 and %d; %s is too large", MaxQuantity, quoteNumber(v, neg))
	}
	var n int64
	for _, d := range digits {
		n = n*10 + int64(d-'0')
	}
	for ; exp > 0; exp-- {
		n *= 10
	}
	if n > MaxQuantity {
		return 0, newError(CodeInvalidField, "quantity must be between 0 and %d; %s is too large", MaxQuantity, quoteNumber(v, neg))
	}
	return int(n), nil
}

// parseExponent parses [+-]?digits. huge is +1 or -1 when the exponent's
// magnitude exceeds any that matters (its value is then meaningless).
func parseExponent(e []byte) (exp int64, huge int) {
	if len(e) == 0 {
		return 0, 0
	}
	neg := false
	switch e[0] {
	case '-':
		neg = true
		e = e[1:]
	case '+':
		e = e[1:]
	}
	for _, d := range e {
		exp = exp*10 + int64(d-'0')
		if exp > 1<<40 {
			if neg {
				return 0, -1
			}
			return 0, 1
		}
	}
	if neg {
		exp = -exp
	}
	return exp, 0
}

func quoteNumber(v []byte, neg bool) string {
	const maxShown = 40
	s := string(v)
	if neg {
		s = "-" + s
	}
	if len(s) > maxShown {
		s = s[:maxShown] + "…"
	}
	return s
}

func describeJSONStart(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || strictjson.IsDigit(c):
		return "a number"
	}
	return "invalid JSON"
}
