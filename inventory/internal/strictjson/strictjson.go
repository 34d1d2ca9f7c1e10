package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of a document, so that a deeply nested one
// cannot exhaust the stack.
const MaxDepth = 64

// Quote quotes a member name for an error message, cut short so
// that a huge name cannot blow up the response.
func Quote(s string) string {
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

// IsDigit reports whether c is an ASCII digit.
func IsDigit(c byte) bool { return '0' <= c && c <= '9' }

// Span is a byte range of the document; Escaped marks a string whose raw
// bytes hold an escape, so that it must be decoded before it is compared.
type Span struct {
	Start, End int // for strings: the content between the quotes
	Escaped    bool
}

// EqualString reports whether the string s of b is want.
func (s Span) EqualString(b []byte, want string) bool {
	if !s.Escaped {
		return string(b[s.Start:s.End]) == want // no allocation
	}
	return s.Decode(b) == want
}

// Decode returns the string s of b, unescaped.
func (s Span) Decode(b []byte) string {
	if !s.Escaped {
		return string(b[s.Start:s.End])
	}
	var out string
	// The bytes were validated as a JSON string, so this cannot fail.
	_ = json.Unmarshal(b[s.Start-1:s.End+1], &out)
	return out
}

func (s Span) equal(b []byte, o Span) bool {
	if !s.Escaped && !o.Escaped {
		return bytes.Equal(b[s.Start:s.End], b[o.Start:o.End])
	}
	return s.Decode(b) == o.Decode(b)
}

// Parser is a strict RFC 8259 validator that, unlike encoding/json,
// rejects duplicate member names, and reports the members of an object
// without decoding them. B is the document, I the offset it has read to.
type Parser struct {
	B []byte
	I int
}

func (p *Parser) Space() {
	for p.I < len(p.B) {
		switch p.B[p.I] {
		case ' ', '\t', '\n', '\r':
			p.I++
		default:
			return
		}
	}
}

// SyntaxError says where and why a document is not valid JSON.
type SyntaxError struct {
	At   int // the 1-based byte offset, 0 when the document ends early
	What string
}

func (e *SyntaxError) Error() string {
	if e.At == 0 {
		return "it ends early, " + e.What
	}
	return fmt.Sprintf("at byte %d, %s", e.At, e.What)
}

func (p *Parser) fail(what string) *SyntaxError {
	if p.I >= len(p.B) {
		return &SyntaxError{What: what}
	}
	return &SyntaxError{At: p.I + 1, What: what}
}

func (p *Parser) value(depth int) *SyntaxError {
	if p.I >= len(p.B) {
		return p.fail("expected a value")
	}
	switch c := p.B[p.I]; {
	case c == '{':
		return p.Object(depth+1, nil)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		_, err := p.str()
		return err
	case c == '-' || IsDigit(c):
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

// Object parses an object at p.I, at nesting level depth (1 for the
// outermost), calling member (when not nil) for each
// member in order. Duplicate names are an error at every depth.
func (p *Parser) Object(depth int, member func(key, value Span)) *SyntaxError {
	if depth > MaxDepth {
		return p.fail(fmt.Sprintf("nesting is deeper than %d levels", MaxDepth))
	}
	p.I++ // '{'
	var keys []Span
	var seen map[string]struct{}
	p.Space()
	if p.I < len(p.B) && p.B[p.I] == '}' {
		p.I++
		return nil
	}
	for {
		p.Space()
		if p.I >= len(p.B) || p.B[p.I] != '"' {
			return p.fail(`expected a member name in double quotes`)
		}
		keyAt := p.I
		key, err := p.str()
		if err != nil {
			return err
		}
		// Duplicate check: a linear scan for small objects, a map past 16
		// members, so a large hostile body stays linear.
		if seen == nil && len(keys) < 16 {
			for _, k := range keys {
				if k.equal(p.B, key) {
					p.I = keyAt
					return p.fail(fmt.Sprintf("member %s appears twice", Quote(key.Decode(p.B))))
				}
			}
			keys = append(keys, key)
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 32)
				for _, k := range keys {
					seen[k.Decode(p.B)] = struct{}{}
				}
			}
			name := key.Decode(p.B)
			if _, dup := seen[name]; dup {
				p.I = keyAt
				return p.fail(fmt.Sprintf("member %s appears twice", Quote(name)))
			}
			seen[name] = struct{}{}
		}
		p.Space()
		if p.I >= len(p.B) || p.B[p.I] != ':' {
			return p.fail(`expected ':' after a member name`)
		}
		p.I++
		p.Space()
		start := p.I
		if err := p.value(depth); err != nil {
			return err
		}
		if member != nil {
			member(key, Span{Start: start, End: p.I})
		}
		p.Space()
		if p.I >= len(p.B) {
			return p.fail(`expected ',' or '}'`)
		}
		switch p.B[p.I] {
		case ',':
			p.I++
		case '}':
			p.I++
			return nil
		default:
			return p.fail(`expected ',' or '}'`)
		}
	}
}

func (p *Parser) array(depth int) *SyntaxError {
	if depth > MaxDepth {
		return p.fail(fmt.Sprintf("nesting is deeper than %d levels", MaxDepth))
	}
	p.I++ // '['
	p.Space()
	if p.I < len(p.B) && p.B[p.I] == ']' {
		p.I++
		return nil
	}
	for {
		p.Space()
		if err := p.value(depth); err != nil {
			return err
		}
		p.Space()
		if p.I >= len(p.B) {
			return p.fail(`expected ',' or ']'`)
		}
		switch p.B[p.I] {
		case ',':
			p.I++
		case ']':
			p.I++
			return nil
		default:
			return p.fail(`expected ',' or ']'`)
		}
	}
}

// str parses a string at p.I and returns the span of its content.
func (p *Parser) str() (Span, *SyntaxError) {
	p.I++ // opening quote
	s := Span{Start: p.I}
	for p.I < len(p.B) {
		c := p.B[p.I]
		switch {
		case c == '"':
			s.End = p.I
			p.I++
			return s, nil
		case c < 0x20:
			return s, p.fail("a control character must be escaped inside a string")
		case c == '\\':
			s.Escaped = true
			p.I++
			if p.I >= len(p.B) {
				return s, p.fail("unterminated string")
			}
			switch p.B[p.I] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.I++
			case 'u':
				p.I++
				for k := 0; k < 4; k++ {
					if p.I >= len(p.B) || !isHex(p.B[p.I]) {
						return s, p.fail(`\u must be followed by four hex digits`)
					}
					p.I++
				}
			default:
				return s, p.fail("invalid escape in a string")
			}
		default:
			p.I++
		}
	}
	return s, p.fail("unterminated string")
}

func isHex(c byte) bool {
	return IsDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func (p *Parser) number() *SyntaxError {
	if p.B[p.I] == '-' {
		p.I++
	}
	switch {
	case p.I < len(p.B) && p.B[p.I] == '0':
		p.I++
	case p.I < len(p.B) && IsDigit(p.B[p.I]):
		for p.I < len(p.B) && IsDigit(p.B[p.I]) {
			p.I++
		}
	default:
		return p.fail("invalid number")
	}
	if p.I < len(p.B) && p.B[p.I] == '.' {
		p.I++
		if p.I >= len(p.B) || !IsDigit(p.B[p.I]) {
			return p.fail("a decimal point must be followed by a digit")
		}
		for p.I < len(p.B) && IsDigit(p.B[p.I]) {
			p.I++
		}
	}
	if p.I < len(p.B) && (p.B[p.I] == 'e' || p.B[p.I] == 'E') {
		p.I++
		if p.I < len(p.B) && (p.B[p.I] == '+' || p.B[p.I] == '-') {
			p.I++
		}
		if p.I >= len(p.B) || !IsDigit(p.B[p.I]) {
			return p.fail("an exponent must have digits")
		}
		for p.I < len(p.B) && IsDigit(p.B[p.I]) {
			p.I++
		}
	}
	return nil
}

func (p *Parser) literal(lit string) *SyntaxError {
	if len(p.B)-p.I >= len(lit) && string(p.B[p.I:p.I+len(lit)]) == lit {
		p.I += len(lit)
		return nil
	}
	return p.fail("invalid literal")
}
