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

// The module's shipped code (its .go files but tests, test data and
// generated copies, which are measured at their source) is held to two
// sizes a reader can carry: no function longer than maxFuncLines lines,
// from func to the closing brace (a longer one is split into steps that
// say what they do), and no package of more than maxPackageLines lines
// (a larger one is split by job, as internal/wire, internal/suite,
// internal/checks and internal/consistency are).
const (
	maxFuncLines    = 80
	maxPackageLines = 4000
)

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
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		packageLines[filepath.Dir(path)] += bytes.Count(src, []byte("\n"))
		for _, fn := range functions(f) {
			funcs++
			from, to := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := to.Line - from.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long, more than %d: split it into steps that say what they do", path, from.Line, funcName(fn), n, maxFuncLines)
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

// functions are the functions of f: its declarations, and the function
// literals outside them (a literal inside a declaration counts toward the
// declaration's length).
func functions(f *ast.File) []ast.Node {
	var out []ast.Node
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok {
			out = append(out, fn)
			continue
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			if lit, ok := n.(*ast.FuncLit); ok {
				out = append(out, lit)
				return false
			}
			return true
		})
	}
	return out
}

// funcName names a function of functions.
func funcName(fn ast.Node) string {
	if d, ok := fn.(*ast.FuncDecl); ok {
		return d.Name.Name
	}
	return "a function literal"
}
