package release

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// APIDocFile is the document that names every exported name of every
// released package, who it is for and why it is there.
const APIDocFile = "docs/API.md"

// Exports lists the exported names of every package of the released
// modules that another module can import (not internal, not testdata, not
// a command), by package directory from the repository root ("inventory",
// "storage/redis"): each exported constant, variable, type and function
// by its name, and each exported method of an exported type as
// "Type.Method". Struct fields and interface methods are left to the docs
// of their types. Test files are not read.
func (r *Repo) Exports() (map[string][]string, error) {
	dirs := map[string][]string{} // package directory → its .go files
	for _, f := range r.Files {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
			continue
		}
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		m := r.moduleOf(dir)
		if m == nil || !m.Released() {
			continue
		}
		elems := strings.Split(dir, "/")
		if slices.Contains(elems, "internal") || slices.Contains(elems, "testdata") {
			continue
		}
		dirs[dir] = append(dirs[dir], f)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for dir, files := range dirs {
		var names []string
		isMain := false
		for _, f := range files {
			af, err := parser.ParseFile(fset, filepath.Join(r.Root, filepath.FromSlash(f)), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			if af.Name.Name == "main" {
				isMain = true
				break
			}
			names = append(names, exportedNames(af)...)
		}
		if isMain {
			continue
		}
		slices.Sort(names)
		out[dir] = slices.Compact(names)
	}
	return out, nil
}

// moduleOf is the module whose tree holds the directory dir: the one with
// the longest directory that is dir or a parent of it.
func (r *Repo) moduleOf(dir string) *Module {
	var best *Module
	for _, m := range r.Modules {
		if m.Dir == "" || dir == m.Dir || strings.HasPrefix(dir, m.Dir+"/") {
			if best == nil || len(m.Dir) > len(best.Dir) {
				best = m
			}
		}
	}
	return best
}

// exportedNames lists the exported package-level names of one file, and
// the exported methods of its exported types as "Type.Method".
func exportedNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				names = append(names, d.Name.Name)
				continue
			}
			if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
				names = append(names, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names = append(names, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// receiverType is the name of a method's receiver type: T for T, *T, T[P]
// and *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

var (
	// A section of one package: "### Package `storage/redis` (`redisstore`)".
	packageHeading = regexp.MustCompile("^#+ Package `([^`]*)`")
	codeSpan       = regexp.MustCompile("`([^`]+)`")
	// The name a code span gives: `New(store, ...Option) (*API, error)` is
	// New, `API.ServeRoute(w, r, route, petID)` is API.ServeRoute.
	spanName = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?`)
)

// DocumentedNames reads an API document: under each heading
// "Package `dir`" (dir "." for the repository root's package, if any),
// every table row names in its first cell, each in its own code span, the
// exported names it is about, by package directory. Rows under other
// headings are not read.
func DocumentedNames(doc []byte) map[string][]string {
	out := map[string][]string{}
	pkg, inPkg := "", false
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "#") {
			m := packageHeading.FindStringSubmatch(line)
			pkg, inPkg = "", m != nil
			if inPkg {
				pkg = strings.TrimPrefix(m[1], ".")
			}
			continue
		}
		if !inPkg || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		first := strings.TrimSpace(cells[1])
		if first == "name" || strings.Trim(first, "-: ") == "" {
			continue // the header and its separator
		}
		for _, span := range codeSpan.FindAllStringSubmatch(first, -1) {
			name := spanName.FindString(span[1])
			if name == "" {
				name = span[1]
			}
			out[pkg] = append(out[pkg], name)
		}
	}
	return out
}

// CheckAPIDoc compares docs/API.md with the exported names of the released
// packages and returns one error listing every exported name without a row
// and every name a row gives that is not exported (a removed or misspelled
// name, a package that is not released), or nil when they agree.
func (r *Repo) CheckAPIDoc() error {
	exports, err := r.Exports()
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(APIDocFile)))
	if err != nil {
		return err
	}
	documented := DocumentedNames(doc)
	var missing, stale []string
	for dir, names := range exports {
		for _, n := range names {
			if !slices.Contains(documented[dir], n) {
				missing = append(missing, fmt.Sprintf("%s: `%s`", orDot(dir), n))
			}
		}
	}
	for dir, names := range documented {
		for _, n := range names {
			if !slices.Contains(exports[dir], n) {
				stale = append(stale, fmt.Sprintf("%s: `%s`", orDot(dir), n))
			}
		}
	}
	if len(missing) == 0 && len(stale) == 0 {
		return nil
	}
	slices.Sort(missing)
	stale = slices.Compact(slices.Sorted(slices.Values(stale)))
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not match the exported names of the released packages", APIDocFile)
	if len(missing) > 0 {
		fmt.Fprintf(&b, "\nexported but without a row (add one under \"Package `dir`\", the name in a code span of the first cell):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(stale) > 0 {
		fmt.Fprintf(&b, "\nnamed in a row but not exported there (remove or fix the name):\n  %s", strings.Join(stale, "\n  "))
	}
	return fmt.Errorf("%s", b.String())
}
