package conformancetest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The module's shipped code (its .go files but tests) is held to two
// sizes a reader can carry: no function longer than maxFuncLines lines,
// from func to the closing brace (a longer one is split into steps that
// say what they do), and no package of more than maxPackageLines lines
// (a larger one is split by job, as internal/wire, internal/suite,
// internal/checks and internal/consistency are).
const (
	maxFuncLines    = 80
	maxPackageLines = 4000
)

// longFuncs are the functions allowed over maxFuncLines for now, each
// with why: the test fails on one that is no longer long, so that its
// line goes as soon as it can.
var longFuncs = map[string]string{
	"internal/faults/target.go:ParseURL": "the Redis URL grammar, to be written once for the store and the suite",
}

// TestShippedCodeShort walks the module and fails on every function and
// package of shipped code over its bound, naming it.
func TestShippedCodeShort(t *testing.T) {
	fset := token.NewFileSet()
	funcs := 0
	packageLines := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		packageLines[filepath.Dir(path)] += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			funcs++
			from, to := fset.Position(fn.Pos()), fset.Position(fn.End())
			n := to.Line - from.Line + 1
			_, allowed := longFuncs[filepath.ToSlash(path)+":"+fn.Name.Name]
			switch {
			case n > maxFuncLines && !allowed:
				t.Errorf("%s:%d: %s is %d lines long, more than %d: split it into steps that say what they do", path, from.Line, fn.Name.Name, n, maxFuncLines)
			case n <= maxFuncLines && allowed:
				t.Errorf("%s:%d: %s is %d lines long, within %d: remove it from longFuncs", path, from.Line, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if funcs < 300 || len(packageLines) < 8 {
		t.Fatalf("only %d functions in %d packages found: the test reads the wrong files", funcs, len(packageLines))
	}
	for dir, n := range packageLines {
		if n > maxPackageLines {
			t.Errorf("package %s has %d lines of shipped code, more than %d: split it by job", dir, n, maxPackageLines)
		}
	}
}
