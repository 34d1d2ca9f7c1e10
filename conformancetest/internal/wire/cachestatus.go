package wire

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// A list answered during a store outage from the last state the store
// confirmed (a deployment's stale-if-error mode, docs/CONTRACT.md
// "Through a store outage") says so with the Cache-Status header field of
// RFC 9211, whose member of the cache named CacheName has the parameter
// fwd=stale, and with Age (RFC 9111 §5.1). Cache-Status is a structured
// field list (RFC 8941 §3.1): other caches in front may add members of
// their own, so the mark is found by the name of its member, never by
// the field's text.

// CacheName is the name of the deployment's own member of Cache-Status.
const CacheName = "petinventory"

// CacheStatusMember is one member of a Cache-Status field: the cache
// that wrote it and its parameters, in order.
type CacheStatusMember struct {
	Cache  string
	Params []CacheStatusParam
}

// CacheStatusParam is a parameter of a member: its key and its value as
// RFC 8941 gives it (a token as written, a string unquoted, an integer
// or decimal as written, a boolean "?1" or "?0"; a key without a value
// is the boolean true, "?1").
type CacheStatusParam struct {
	Key, Value string
}

// Param returns the value of the member's parameter key, and whether it
// has one.
func (m CacheStatusMember) Param(key string) (string, bool) {
	for _, p := range m.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// ParseCacheStatus parses the Cache-Status fields of h (several lines are
// one list, joined with commas, RFC 8941 §4.2) as a structured field
// list of items, each a cache's name (a token or a string) with
// parameters. No field is no member; a field that is not such a list is
// an error that says where.
func ParseCacheStatus(h http.Header) ([]CacheStatusMember, error) {
	lines := h.Values("Cache-Status")
	if len(lines) == 0 {
		return nil, nil
	}
	p := &sfParser{s: strings.Join(lines, ", ")}
	p.skip(" ")
	var out []CacheStatusMember
	for {
		m, err := p.member()
		if err != nil {
			return nil, fmt.Errorf("Cache-Status %q: %v", p.s, err)
		}
		out = append(out, m)
		p.skip(" \t")
		if p.done() {
			return out, nil
		}
		if !p.eat(',') {
			return nil, fmt.Errorf("Cache-Status %q: at %d: want a comma between members", p.s, p.i)
		}
		p.skip(" \t")
		if p.done() {
			return nil, fmt.Errorf("Cache-Status %q: a comma with no member after it", p.s)
		}
	}
}

// StaleMark reports whether the answer carries the deployment's stale
// mark: its own member of Cache-Status (CacheName) with fwd=stale. An
// error says that Cache-Status is not a well-formed list.
func StaleMark(h http.Header) (bool, error) {
	members, err := ParseCacheStatus(h)
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if v, ok := m.Param("fwd"); m.Cache == CacheName && ok && v == "stale" {
			return true, nil
		}
	}
	return false, nil
}

// ErrNoAge is Age's error for an answer without an Age field.
var ErrNoAge = errors.New("no Age header")

// Age is the answer's Age (RFC 9111 §5.1): one non-negative integer of
// seconds (delta-seconds, digits only).
func Age(h http.Header) (int64, error) {
	vs := h.Values("Age")
	switch {
	case len(vs) == 0:
		return 0, ErrNoAge
	case len(vs) > 1:
		return 0, fmt.Errorf("%d Age headers, want one", len(vs))
	}
	v := strings.TrimSpace(vs[0])
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, fmt.Errorf("Age %q is not a whole number of seconds", vs[0])
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("Age %q is out of range", vs[0])
	}
	return n, nil
}

// sfParser reads a structured field (RFC 8941 §4.2), as far as
// Cache-Status needs: a list of items with parameters.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

func (p *sfParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) eat(c byte) bool {
	if p.peek() == c && !p.done() {
		p.i++
		return true
	}
	return false
}

func (p *sfParser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// member reads one list member: a cache's name and its parameters.
func (p *sfParser) member() (CacheStatusMember, error) {
	var m CacheStatusMember
	switch c := p.peek(); {
	case c == '"':
		s, err := p.str()
		if err != nil {
			return m, err
		}
		m.Cache = s
	case isAlpha(c) || c == '*':
		m.Cache = p.token()
	default:
		return m, fmt.Errorf("at %d: want a cache's name (a token or a string)", p.i)
	}
	for p.eat(';') {
		p.skip(" ")
		key := p.key()
		if key == "" {
			return m, fmt.Errorf("at %d: want a parameter's key (lower case)", p.i)
		}
		value := "?1"
		if p.eat('=') {
			v, err := p.bare()
			if err != nil {
				return m, err
			}
			value = v
		}
		m.Params = append(m.Params, CacheStatusParam{Key: key, Value: value})
	}
	return m, nil
}

// bare reads a bare item (RFC 8941 §3.3) as CacheStatusParam.Value says.
func (p *sfParser) bare() (string, error) {
	switch c := p.peek(); {
	case c == '"':
		return p.str()
	case c == '?':
		p.i++
		if b := p.peek(); b == '0' || b == '1' {
			p.i++
			return "?" + string(b), nil
		}
		return "", fmt.Errorf("at %d: a boolean is ?0 or ?1", p.i)
	case c == '-' || isDigit(c):
		return p.number()
	case isAlpha(c) || c == '*':
		return p.token(), nil
	case c == ':':
		end := strings.IndexByte(p.s[p.i+1:], ':')
		if end < 0 {
			return "", fmt.Errorf("at %d: a byte sequence without its closing colon", p.i)
		}
		v := p.s[p.i : p.i+end+2]
		p.i += end + 2
		return v, nil
	}
	return "", fmt.Errorf("at %d: want a value (token, string, number or boolean)", p.i)
}

// token reads a token: ALPHA or "*", then tchar, ":" and "/".
func (p *sfParser) token() string {
	start := p.i
	p.i++
	for !p.done() && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return p.s[start:p.i]
}

// key reads a key: lcalpha or "*", then lcalpha, DIGIT, "_-.*".
func (p *sfParser) key() string {
	start := p.i
	if c := p.peek(); !(c >= 'a' && c <= 'z' || c == '*') {
		return ""
	}
	for !p.done() {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z' || isDigit(c) || strings.IndexByte("_-.*", c) >= 0) {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

// str reads a string: quoted, with \" and \\ its only escapes.
func (p *sfParser) str() (string, error) {
	start := p.i
	p.i++
	var sb strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if n := p.peek(); n != '"' && n != '\\' {
				return "", fmt.Errorf("at %d: a string's only escapes are \\\" and \\\\", p.i)
			}
			sb.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return sb.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", fmt.Errorf("at %d: a string holds only visible ASCII and spaces", p.i-1)
		default:
			sb.WriteByte(c)
		}
	}
	return "", fmt.Errorf("at %d: a string without its closing quote", start)
}

// number reads an integer (at most 15 digits) or a decimal (at most 12
// digits, a dot, 1 to 3 digits).
func (p *sfParser) number() (string, error) {
	start := p.i
	p.eat('-')
	digits := p.i
	for !p.done() && isDigit(p.s[p.i]) {
		p.i++
	}
	whole := p.i - digits
	if whole == 0 {
		return "", fmt.Errorf("at %d: a number without digits", start)
	}
	if !p.eat('.') {
		if whole > 15 {
			return "", fmt.Errorf("at %d: an integer of more than 15 digits", start)
		}
		return p.s[start:p.i], nil
	}
	frac := p.i
	for !p.done() && isDigit(p.s[p.i]) {
		p.i++
	}
	if whole > 12 || p.i == frac || p.i-frac > 3 {
		return "", fmt.Errorf("at %d: a decimal has 1 to 12 digits, a dot and 1 to 3 digits", start)
	}
	return p.s[start:p.i], nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isTchar is RFC 9110's tchar.
func isTchar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
