package demo

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestAPIKeys(t *testing.T) {
	var out bytes.Buffer
	keys, generated, err := APIKeys([]string{"set-key"}, "", &out)
	if err != nil || generated || !slices.Equal(keys, []string{"set-key"}) || out.Len() != 0 {
		t.Errorf("with a key: %v, %v, %v, printed %q", keys, generated, err, out.String())
	}
	if _, _, err := APIKeys([]string{"set-key"}, "keys.txt", &out); err == nil || !strings.Contains(err.Error(), "set one") {
		t.Errorf("with both: %v, want the server's error", err)
	}
	keys, generated, err = APIKeys(nil, "", &out)
	if err != nil || !generated || len(keys) != 1 || len(keys[0]) != 48 {
		t.Fatalf("with none: %v, %v, %v; want one generated key", keys, generated, err)
	}
	if strings.Count(out.String(), keys[0]) != 1 {
		t.Errorf("the generated key is not printed once: %q", out.String())
	}
}
