package release

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// MaxFuncLines is the longest a function of shipped code may be, from its
// func line to its closing brace: a function that grows past it is split
// into steps that say what they do, so that a reader sees one on a screen.
const MaxFuncLines = 80

// LongFunc is a function of shipped code longer than MaxFuncLines.
type LongFunc struct {
	File  string // slash-separated, from the repository root
	Line  int    // the line of its func keyword
	Name  string // F, T.M for a method, or "a function literal"
	Lines int    // from the func line to the closing brace, both counted
}

func (f LongFunc) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines long, more than %d", f.File, f.Line, f.Name, f.Lines, MaxFuncLines)
}

// FuncLengths measures every function of the shipped code of every module
// of the tree: the .go files that are neither tests (_test.go) nor under a
// testdata directory nor generated (ast.IsGenerated: the generated copies
// are measured at their source). It returns how many functions it measured
// in each module, by the module's directory ("" for the root module), and
// those longer than MaxFuncLines, in file order. Functions are the
// declarations and the function literals outside them (a literal inside a
// declaration counts toward the declaration's length). A file that does
// not parse is an error: a check that skipped it would hide what it holds.
func (r *Repo) FuncLengths() (funcs map[string]int, long []LongFunc, err error) {
	funcs = map[string]int{}
	err = r.eachShippedFile(func(f string, fset *token.FileSet, af *ast.File) {
		n, l := fileFuncLengths(fset, f, af)
		funcs[r.moduleOfFile(f).Dir] += n
		long = append(long, l...)
	})
	return funcs, long, err
}

// MaxPackageLines is the most lines of shipped code one package may hold:
// past it, a package holds more than one job, and is split by job.
const MaxPackageLines = 4000

// PackageLines counts the lines of shipped code of every package of the
// tree (the files FuncLengths measures), by the package's directory,
// slash-separated from the root.
func (r *Repo) PackageLines() (map[string]int, error) {
	lines := map[string]int{}
	err := r.eachShippedFile(func(f string, fset *token.FileSet, af *ast.File) {
		lines[path.Dir(f)] += fset.Position(af.FileEnd).Line
	})
	return lines, err
}

// eachShippedFile parses every file of shipped code, generated files left
// out, and calls fn with it.
func (r *Repo) eachShippedFile(fn func(f string, fset *token.FileSet, af *ast.File)) error {
	fset := token.NewFileSet()
	for _, f := range r.Files {
		if !isShippedGo(f) {
			continue
		}
		af, err := parser.ParseFile(fset, filepath.Join(r.Root, filepath.FromSlash(f)), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !ast.IsGenerated(af) {
			fn(f, fset, af)
		}
	}
	return nil
}

// isShippedGo reports whether the file named f (slash-separated, from the
// root) is Go source of shipped code: not a test, not test data.
func isShippedGo(f string) bool {
	if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
		return false
	}
	return !slices.Contains(strings.Split(path.Dir(f), "/"), "testdata")
}

// fileFuncLengths measures the functions of one parsed file: it counts
// them and returns those longer than MaxFuncLines.
func fileFuncLengths(fset *token.FileSet, name string, af *ast.File) (funcs int, long []LongFunc) {
	measure := func(node ast.Node, fn string) {
		funcs++
		from, to := fset.Position(node.Pos()), fset.Position(node.End())
		if n := to.Line - from.Line + 1; n > MaxFuncLines {
			long = append(long, LongFunc{File: name, Line: from.Line, Name: fn, Lines: n})
		}
	}
	for _, d := range af.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			measure(fd, funcName(fd))
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if lit, ok := n.(*ast.FuncLit); ok {
				measure(lit, "a function literal")
				return false
			}
			return true
		})
	}
	return funcs, long
}

// funcName is a declared function's name as a reader looks it up: F, or
// T.M for a method of T.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return receiverType(fd.Recv.List[0].Type) + "." + fd.Name.Name
}
