package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// DecodeJSON decodes exactly one JSON value, numbers kept as json.Number.
func DecodeJSON(body []byte) (any, error) {
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

// IntegerValue reports whether v is a JSON number with a whole value (as in
// JSON Schema, 5.0 is an integer) and returns it, exactly.
func IntegerValue(v any) (*big.Int, bool) {
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

// Describe names a decoded JSON value for a message, shortly.
func Describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("%t (a boolean)", x)
	case json.Number:
		return string(x)
	case string:
		return fmt.Sprintf("%s (a string)", Shorten(fmt.Sprintf("%q", x), 60))
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// Shorten cuts s to n bytes, with an ellipsis when it was longer.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
