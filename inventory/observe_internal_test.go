package inventory

import (
	"testing"
	"unsafe"
)

// A method outside the standard ones is copied: the adapter's memory may
// be reused after the request, the observer may keep the string.
func TestStableMethodCopies(t *testing.T) {
	b := []byte("BREW")
	m := stableMethod(string(b[:len(b):len(b)]))
	view := unsafeString(b)
	kept := stableMethod(view)
	copy(b, "XXXX")
	if m != "BREW" || kept != "BREW" {
		t.Errorf("stableMethod kept %q and %q after the buffer changed; want BREW", m, kept)
	}
	if got := stableMethod("PATCH"); got != "PATCH" {
		t.Errorf("stableMethod(PATCH) = %q", got)
	}
}

// unsafeString views b as a string, as fasthttp's adapters do.
func unsafeString(b []byte) string { return unsafe.String(&b[0], len(b)) }
