package release

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// maxReadmeLines bounds the README: the project's front door holds the
// first screen, the three paths (embed, run, check) and links; the detail
// lives in docs/ and the modules' own READMEs.
const maxReadmeLines = 250

// TestReadmeShort fails when README.md grows past maxReadmeLines lines.
func TestReadmeShort(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(text, []byte("\n")); n > maxReadmeLines {
		t.Errorf("README.md is %d lines long, more than %d: move the detail to docs/ and link it", n, maxReadmeLines)
	} else if n < 50 {
		t.Fatalf("README.md is %d lines long: the test reads the wrong file", n)
	}
}
