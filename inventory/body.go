package inventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of a body, so that a deeply nested
// document cannot exhaust the stack.
const maxJSONDepth = 64

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
	p := jsonParser{b: body}
	p.space()
	if p.i == len(p.b) {
		return 0, newError(CodeInvalidJSON, `the request body is empty; send a JSON object such as {"quantity": 5}`)
	}
	if !utf8.Valid(body) {
		return 0, newError(CodeInvalidJSON, "the request body is not valid UTF-8")
	}
	if c := p.b[p.i]; c != '{' {
		return 0, newError(CodeInvalidJSON, `the request body must be a JSON object such as {"quantity": 5}, not %s`, describeJSONStart(c))
	}
	var (
		qty, unknown  span
		hasQ, hasUnkn bool
	)
	// The top-level object is level 1 of maxJSONDepth.
	perr := p.object(1, func(key, value span) {
		if key.equalString(p.b, "quantity") {
			qty, hasQ = value, true
		} else if !hasUnkn {
			unknown, hasUnkn = key, true
		}
	})
	if perr != nil {
		return 0, perr
	}
	p.space()
	if p.i != len(p.b) {
		return 0, newError(CodeInvalidJSON, "the request body has data after the JSON object, at byte %d; send exactly one object", p.i+1)
	}
	if hasUnkn {
		return 0, newError(CodeUnknownField, "unknown member %s in the request body: an update may only hold quantity", quoteForMessage(unknown.decode(p.b)))
	}
	if !hasQ {
		return 0, newError(CodeMissingField, `the request body has no quantity member; send {"quantity": <new stock count>}`)
	}
	return parseQuantity(p.b[qty.start:qty.end])
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
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	intPart = v[:i]
	if i < len(v) && v[i] == '.' {
		j := i + 1
		for j < len(v) && isDigit(v[j]) {
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

// quoteForMessage quotes a member name for an error message, cut short so
// that a huge name cannot blow up the response.
func quoteForMessage(s string) string {
	const maxShown = 64
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
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
	case c == '-' || isDigit(c):
		return "a number"
	}
	return "invalid JSON"
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// span is a byte range of the body; escaped marks a string whose raw bytes
// hold an escape, so that it must be decoded before it is compared.
type span struct {
	start, end int // for strings: the content between the quotes
	escaped    bool
}

func (s span) equalString(b []byte, want string) bool {
	if !s.escaped {
		return string(b[s.start:s.end]) == want // no allocation
	}
	return s.decode(b) == want
}

func (s span) decode(b []byte) string {
	if !s.escaped {
		return string(b[s.start:s.end])
	}
	var out string
	// The bytes were validated as a JSON string, so this cannot fail.
	_ = json.Unmarshal(b[s.start-1:s.end+1], &out)
	return out
}

func (s span) equal(b []byte, o span) bool {
	if !s.escaped && !o.escaped {
		return bytes.Equal(b[s.start:s.end], b[o.start:o.end])
	}
	return s.decode(b) == o.decode(b)
}

// jsonParser is a strict RFC 8259 validator that, unlike encoding/json,
// rejects duplicate member names, and reports the top-level members of an
// object without decoding them.
type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) fail(what string) *Error {
	if p.i >= len(p.b) {
		return newError(CodeInvalidJSON, "the request body is not valid JSON: it ends early, %s", what)
	}
	return newError(CodeInvalidJSON, "the request body is not valid JSON: at byte %d, %s", p.i+1, what)
}

func (p *jsonParser) value(depth int) *Error {
	if p.i >= len(p.b) {
		return p.fail("expected a value")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth+1, nil)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		_, err := p.str()
		return err
	case c == '-' || isDigit(c):
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return p.fail("expected a value")
}

// object parses an object at p.i, calling member (when not nil) for each
// member in order. Duplicate names are an error at every depth.
func (p *jsonParser) object(depth int, member func(key, value span)) *Error {
	if depth > maxJSONDepth {
		return p.fail(fmt.Sprintf("nesting is deeper than %d levels", maxJSONDepth))
	}
	p.i++ // '{'
	var keys []span
	var seen map[string]struct{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return p.fail(`expected a member name in double quotes`)
		}
		keyAt := p.i
		key, err := p.str()
		if err != nil {
			return err
		}
		// Duplicate check: a linear scan for small objects, a map past 16
		// members, so a large hostile body stays linear.
		if seen == nil && len(keys) < 16 {
			for _, k := range keys {
				if k.equal(p.b, key) {
					p.i = keyAt
					return p.fail(fmt.Sprintf("member %s appears twice", quoteForMessage(key.decode(p.b))))
				}
			}
			keys = append(keys, key)
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 32)
				for _, k := range keys {
					seen[k.decode(p.b)] = struct{}{}
				}
			}
			name := key.decode(p.b)
			if _, dup := seen[name]; dup {
				p.i = keyAt
				return p.fail(fmt.Sprintf("member %s appears twice", quoteForMessage(name)))
			}
			seen[name] = struct{}{}
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.fail(`expected ':' after a member name`)
		}
		p.i++
		p.space()
		start := p.i
		if err := p.value(depth); err != nil {
			return err
		}
		if member != nil {
			member(key, span{start: start, end: p.i})
		}
		p.space()
		if p.i >= len(p.b) {
			return p.fail(`expected ',' or '}'`)
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.fail(`expected ',' or '}'`)
		}
	}
}

func (p *jsonParser) array(depth int) *Error {
	if depth > maxJSONDepth {
		return p.fail(fmt.Sprintf("nesting is deeper than %d levels", maxJSONDepth))
	}
	p.i++ // '['
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return nil
	}
	for {
		p.space()
		if err := p.value(depth); err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.b) {
			return p.fail(`expected ',' or ']'`)
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.fail(`expected ',' or ']'`)
		}
	}
}

// str parses a string at p.i and returns the span of its content.
func (p *jsonParser) str() (span, *Error) {
	p.i++ // opening quote
	s := span{start: p.i}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s.end = p.i
			p.i++
			return s, nil
		case c < 0x20:
			return s, p.fail("a control character must be escaped inside a string")
		case c == '\\':
			s.escaped = true
			p.i++
			if p.i >= len(p.b) {
				return s, p.fail("unterminated string")
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				p.i++
				for k := 0; k < 4; k++ {
					if p.i >= len(p.b) || !isHex(p.b[p.i]) {
						return s, p.fail(`\u must be followed by four hex digits`)
					}
					p.i++
				}
			default:
				return s, p.fail("invalid escape in a string")
			}
		default:
			p.i++
		}
	}
	return s, p.fail("unterminated string")
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func (p *jsonParser) number() *Error {
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && isDigit(p.b[p.i]):
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	default:
		return p.fail("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.i >= len(p.b) || !isDigit(p.b[p.i]) {
			return p.fail("a decimal point must be followed by a digit")
		}
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.b) || !isDigit(p.b[p.i]) {
			return p.fail("an exponent must have digits")
		}
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	}
	return nil
}

func (p *jsonParser) literal(lit string) *Error {
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return nil
	}
	return p.fail("invalid literal")
}
