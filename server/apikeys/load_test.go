package apikeys

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("# rotated weekly\nfile-key-1\n\nfile-key-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := Load([]string{"a-key"}, "")
	if err != nil || !slices.Equal(keys, []string{"a-key"}) {
		t.Errorf("list: %v, %v", keys, err)
	}
	if keys, err = Load(nil, file); err != nil || !slices.Equal(keys, []string{"file-key-1", "file-key-2"}) {
		t.Errorf("file: %v, %v", keys, err)
	}
	if _, err = Load([]string{"a-key"}, file); err == nil || !strings.Contains(err.Error(), "set one") {
		t.Errorf("both: %v", err)
	}
	if _, err = Load(nil, filepath.Join(t.TempDir(), "missing")); err == nil || !strings.HasPrefix(err.Error(), "INVENTORY_API_KEYS_FILE: ") {
		t.Errorf("missing file: %v", err)
	}
	_, err = Load(nil, "")
	if !errors.Is(err, ErrNoKeys) {
		t.Fatalf("none: %v, want ErrNoKeys", err)
	}
	for _, want := range []string{"INVENTORY_API_KEYS ", "INVENTORY_API_KEYS_FILE", "openssl rand -hex 32"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ErrNoKeys %q does not say %q", err, want)
		}
	}
}

func TestParseList(t *testing.T) {
	if keys, err := ParseList(" k1 ,k2,,"); err != nil || !slices.Equal(keys, []string{"k1", "k2"}) {
		t.Errorf("%v, %v", keys, err)
	}
	if _, err := ParseList(" , "); err == nil {
		t.Error("a list without a key is accepted")
	}
}
