package linearize

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// maxFuncLines bounds every function of the package, its tests included,
// from func to the closing brace: a function that grows past it is split
// into steps that say what they do.
const maxFuncLines = 80

// TestFunctionsShort: no function of the package is longer than
// maxFuncLines lines.
func TestFunctionsShort(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	funcs := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			funcs++
			from, to := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := to.Line - from.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long, more than %d", e.Name(), from.Line, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
	if funcs < 20 {
		t.Fatalf("only %d functions found: the test reads the wrong files", funcs)
	}
}
