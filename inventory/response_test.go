package inventory

import (
	"github.com/petinventory/petinventory/inventory/internal/wire"

	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// randomString mixes ASCII (controls, quotes, backslashes, DEL, HTML
// characters), multi-byte runes, U+2028/U+2029, U+FFFD itself, and bytes
// that are not UTF-8 (lone continuation bytes, truncated and overlong
// sequences, encoded surrogates).
func randomString(r *rand.Rand) string {
	pieces := []string{
		"\x00", "\x01", "\x1f", "\b", "\f", "\n", "\r", "\t", "\"", "\\", "/", "<", ">", "&", "\x7f",
		"a", "Z", " ", "é", "€", "😀", "\u2028", "\u2029", "\ufffd", "\ufeff",
		"\x80", "\xbf", "\xc0\xaf", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xfe",
	}
	n := r.IntN(12)
	var b []byte
	for range n {
		if r.IntN(4) == 0 {
			b = append(b, byte(r.IntN(256)))
		} else {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
	}
	return string(b)
}

func TestAppendJSONString(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := randomString(r)
		got := appendJSONString([]byte("prefix"), s)
		if string(got[:6]) != "prefix" {
			t.Fatalf("appendJSONString overwrote what b held")
		}
		got = got[6:]
		if !json.Valid(got) {
			t.Fatalf("appendJSONString(%q) = %s: not valid JSON", s, got)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var gotS, wantS string
		if err := json.Unmarshal(got, &gotS); err != nil {
			t.Fatalf("appendJSONString(%q) = %s: %v", s, got, err)
		}
		if err := json.Unmarshal(want, &wantS); err != nil {
			t.Fatal(err)
		}
		if gotS != wantS {
			t.Fatalf("appendJSONString(%q) = %s, decodes to %q; json.Marshal's %s decodes to %q", s, got, gotS, want, wantS)
		}
		if utf8.ValidString(s) && gotS != s {
			t.Fatalf("appendJSONString(%q) does not round-trip: %q", s, gotS)
		}
	}
}

func TestAppendJSONStringBytes(t *testing.T) {
	cases := map[string]string{
		``:                  `""`,
		`plain`:             `"plain"`,
		"q\"b\\s/":          `"q\"b\\s/"`,
		"\n\r\t":            `"\n\r\t"`,
		"\x00\x1f\x7f":      `"\u0000\u001f\u007f"`,
		"é😀":                `"é😀"`,
		"a\xffb":            `"a\ufffdb"`,
		"\xed\xa0\x80":      `"\ufffd\ufffd\ufffd"`,
		"\xe2\x82" + "\xac": `"€"`,
	}
	for in, want := range cases {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s; want %s", in, got, want)
		}
	}
}

func TestItemAppendJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	statuses := []Status{StatusAvailable, StatusPending, StatusSold}
	ids := []int64{0, 1, -1, math.MaxInt64, math.MinInt64}
	quantities := []int{0, 1, MaxQuantity, -1, math.MinInt32}
	for i := range 5000 {
		it := Item{PetID: r.Int64() - r.Int64(), Quantity: int(r.Uint32() >> 1), Status: statuses[r.IntN(3)]}
		if i < len(ids) {
			it.PetID = ids[i]
			it.Quantity = quantities[i]
		}
		want, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		if got := it.appendJSON(nil); string(got) != string(want) {
			t.Fatalf("appendJSON(%+v) = %s; encoding/json writes %s", it, got, want)
		}
		// Invalid statuses (which a store should never hold) still give
		// valid JSON with the same meaning as encoding/json's.
		it.Status = Status(randomString(r))
		want, _ = json.Marshal(it)
		got := it.appendJSON([]byte("[1,"))[3:]
		var g, w Item
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("appendJSON(%+v) = %s: %v", it, got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if g != w {
			t.Fatalf("appendJSON(%+v) = %s decodes to %+v; encoding/json's %s to %+v", it, got, g, want, w)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	get := func(r wire.Response) map[string]string {
		h := map[string]string{}
		r.VisitHeaders(func(name, value string) {
			if _, dup := h[name]; dup {
				t.Errorf("header %s set twice", name)
			}
			h[name] = value
		})
		return h
	}
	common := map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
	ok := get(wire.Response{Status: 200})
	if len(ok) != 3 {
		t.Errorf("a 200 has headers %v; want only %v", ok, common)
	}
	for name, value := range common {
		if ok[name] != value {
			t.Errorf("%s = %q; want %q", name, ok[name], value)
		}
	}
	if h := get(errorResponse(errUnavailable)); h["Retry-After"] != "1" || len(h) != 4 {
		t.Errorf("503 headers %v", h)
	}
	if h := get(errorResponse(errNotFound)); len(h) != 3 {
		t.Errorf("404 headers %v", h)
	}
}
