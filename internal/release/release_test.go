package release

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// newRepo writes a small releasable repository into a new git repository:
// a root module example.com/r, a released nested module a that imports it,
// and an excluded nested module b. edit may change the files first; a nil
// content removes a file.
func newRepo(t *testing.T, edit map[string]*string) string {
	t.Helper()
	files := map[string]string{
		"go.mod":       "module example.com/r\n\ngo 1.25.0\n",
		"r.go":         "package r\n\n// R is what a imports.\nconst R = 1\n",
		"LICENSE":      "the license text\n",
		"go.work":      "go 1.26.0\n\nuse (\n\t.\n\t./a\n\t./b\n)\n",
		"a/go.mod":     "module example.com/r/a\n\ngo 1.25.0\n\nrequire example.com/r v0.1.0\n\nreplace example.com/r => ../\n",
		"a/a.go":       "package a\n\nimport \"example.com/r\"\n\n// A uses r.\nconst A = r.R\n",
		"b/go.mod":     "module example.com/r/b\n\ngo 1.25.0\n",
		"b/b.go":       "package b\n",
		"CHANGELOG.md": "# Changelog\n\n## v0.1.0 - Unreleased\n\n- first\n",
		"versions.yaml": `module-sets:
  main:
    version: v0.1.0
    modules:
      - example.com/r
      - example.com/r/a
excluded-modules:
  - example.com/r/b
`,
	}
	for name, content := range edit {
		if content == nil {
			delete(files, name)
		} else {
			files[name] = *content
		}
	}
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	return dir
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=release test", "-c", "user.email=release@example.com"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func ptr(s string) *string { return &s }

// tidyEnv keeps the go command of the tidy check offline and out of any
// workspace of the caller.
func tidyEnv(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")
}

func TestCheckReleasable(t *testing.T) {
	tidyEnv(t)
	dir := newRepo(t, nil)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if errs := Check(r, Options{}); len(errs) > 0 {
		t.Fatalf("Check of a releasable tree: %v", errs)
	}
	if got, want := r.Tags(), []string{"v0.1.0", "a/v0.1.0"}; !slices.Equal(got, want) {
		t.Errorf("Tags() = %q, want %q", got, want)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "all")
	if errs := Check(r, Options{Clean: true, SkipTidy: true}); len(errs) > 0 {
		t.Fatalf("Check -clean of a committed tree: %v", errs)
	}
}

// A module holding a command requires its siblings without replace
// directives (go install …@version refuses them); it is tidied against a
// proxy of the tree, and the go.sum lines of the siblings, which exist
// only once they are tagged, are not asked for.
func TestCheckCommandModule(t *testing.T) {
	tidyEnv(t)
	r, err := Load(newRepo(t, map[string]*string{
		"a/go.mod":        ptr("module example.com/r/a\n\ngo 1.25.0\n\nrequire example.com/r v0.1.0\n"),
		"a/cmd/x/main.go": ptr("package main\n\nimport \"example.com/r\"\n\nfunc main() { println(r.R) }\n"),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if errs := Check(r, Options{}); len(errs) > 0 {
		t.Fatalf("Check of a tidy command module without replace directives: %v", errs)
	}
	for diff, want := range map[string]bool{
		"diff current/go.sum tidy/go.sum\n--- current/go.sum\n+++ tidy/go.sum\n@@ -1,1 +1,2 @@\n a v1 h1:x=\n+example.com/r v0.1.0 h1:y=\n": true,
		"diff current/go.sum tidy/go.sum\n--- current/go.sum\n+++ tidy/go.sum\n@@ -1,1 +1,2 @@\n+example.com/other v0.1.0 h1:y=\n":          false,
		"diff current/go.mod tidy/go.mod\n--- current/go.mod\n+++ tidy/go.mod\n@@ -1,1 +1,2 @@\n+require example.com/r/b v0.1.0\n":          false,
		"go: example.com/x: no matching versions\n": false,
		"": false,
	} {
		if got := onlySiblingSums(diff, "example.com/r"); got != want {
			t.Errorf("onlySiblingSums(%q) = %v, want %v", diff, got, want)
		}
	}
}

// TestCheckFindsProblems drives every problem Check reports, one per tree.
func TestCheckFindsProblems(t *testing.T) {
	tidyEnv(t)
	for _, tc := range []struct {
		name string
		edit map[string]*string
		opts Options
		want string
	}{
		{"sibling at another version", map[string]*string{
			"a/go.mod": ptr("module example.com/r/a\n\ngo 1.25.0\n\nrequire example.com/r v0.0.0-00010101000000-000000000000\n\nreplace example.com/r => ../\n"),
		}, Options{SkipTidy: true}, "a/go.mod requires example.com/r v0.0.0-00010101000000-000000000000; versions.yaml releases it at v0.1.0"},
		{"requires an excluded module", map[string]*string{
			"a/go.mod": ptr("module example.com/r/a\n\ngo 1.25.0\n\nrequire (\n\texample.com/r v0.1.0\n\texample.com/r/b v0.1.0\n)\n\nreplace (\n\texample.com/r => ../\n\texample.com/r/b => ../b\n)\n"),
		}, Options{SkipTidy: true}, "a/go.mod requires example.com/r/b, which versions.yaml excludes"},
		{"replace with another directory", map[string]*string{
			"a/go.mod": ptr("module example.com/r/a\n\ngo 1.25.0\n\nrequire example.com/r v0.1.0\n\nreplace example.com/r => ../b\n"),
		}, Options{SkipTidy: true}, "a/go.mod replaces example.com/r with ../b, which is not that module's directory (.)"},
		{"go.work misses a module", map[string]*string{
			"go.work": ptr("go 1.26.0\n\nuse (\n\t.\n\t./b\n)\n"),
		}, Options{SkipTidy: true}, "go.work does not use a (module example.com/r/a)"},
		{"go.work uses a directory without a module", map[string]*string{
			"go.work": ptr("go 1.26.0\n\nuse (\n\t.\n\t./a\n\t./b\n\t./c\n)\n"),
		}, Options{SkipTidy: true}, "go.work uses ./c, which holds no module of the tree"},
		{"untidy go.mod", map[string]*string{
			"a/a.go": ptr("package a\n"), // no longer imports r: tidy would drop the requirement
		}, Options{}, "a/go.mod: `GOWORK=off go mod tidy -diff` fails"},
		{"a command's module with replace directives", map[string]*string{
			"a/cmd/x/main.go": ptr("package main\n\nimport \"example.com/r\"\n\nfunc main() { println(r.R) }\n"),
		}, Options{SkipTidy: true}, "a/go.mod has replace directives, but the module holds a command"},
		{"a command's module untidy", map[string]*string{
			"a/go.mod":        ptr("module example.com/r/a\n\ngo 1.25.0\n\nrequire example.com/r v0.1.0\n"),
			"a/a.go":          ptr("package a\n"),
			"a/cmd/x/main.go": ptr("package main\n\nfunc main() {}\n"), // requires r for nothing
		}, Options{}, "a/go.mod: `GOWORK=off go mod tidy -diff` fails"},
		{"file name module zips refuse", map[string]*string{
			"testdata/nul": ptr("x"),
		}, Options{SkipTidy: true}, `testdata/nul: module zips of example.com/r refuse this file: malformed file path "testdata/nul"`},
		{"a released module imports another module's internal package", map[string]*string{
			"internal/x/x.go": ptr("package x\n\n// X is internal to example.com/r.\nconst X = 1\n"),
			"a/a.go":          ptr("package a\n\nimport (\n\t\"example.com/r\"\n\t\"example.com/r/internal/x\"\n)\n\n// A uses r and its internal x.\nconst A = r.R + x.X\n"),
		}, Options{SkipTidy: true}, "a/a.go imports example.com/r/internal/x, an internal package of module example.com/r"},
		{"a shared package's copy edited by hand", map[string]*string{
			"internal/x/x.go":     ptr("package x\n\n// X is shared.\nconst X = 1\n"),
			"a/internal/x/gen.go": ptr("package x\n\n//go:generate go run ../../../internal/release/cmd/copyshared -src ../../../internal/x\n"),
			"a/internal/x/x.go":   ptr("// Code generated by internal/release/cmd/copyshared from internal/x/x.go. DO NOT EDIT.\n\npackage x\n\n// X is shared.\nconst X = 2\n"),
		}, Options{SkipTidy: true}, "a/internal/x/x.go differs from its source internal/x/x.go: run `go generate` in a/internal/x"},
		{"no LICENSE", map[string]*string{
			"LICENSE": nil,
		}, Options{SkipTidy: true}, "module example.com/r/a: its zip would have no LICENSE"},
		{"no CHANGELOG entry", map[string]*string{
			"CHANGELOG.md": ptr("# Changelog\n\n## v0.0.9\n\n- v0.1.0 is mentioned, but not as a heading\n"),
		}, Options{SkipTidy: true}, "CHANGELOG.md has no entry for v0.1.0"},
		{"no CHANGELOG", map[string]*string{
			"CHANGELOG.md": nil,
		}, Options{SkipTidy: true}, "CHANGELOG.md: open"},
		{"changes in the tree", nil, Options{SkipTidy: true, Clean: true}, "the git tree has changes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(newRepo(t, tc.edit))
			if err != nil {
				t.Fatal(err)
			}
			errs := Check(r, tc.opts)
			var msgs []string
			for _, err := range errs {
				msgs = append(msgs, err.Error())
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tc.want) }) {
				t.Fatalf("Check reports %q, want a problem containing %q", msgs, tc.want)
			}
		})
	}
}

// TestLoadRefusesVersions drives every way versions.yaml can disagree with
// the tree.
func TestLoadRefusesVersions(t *testing.T) {
	versions := func(body string) map[string]*string { return map[string]*string{"versions.yaml": ptr(body)} }
	for _, tc := range []struct {
		name string
		edit map[string]*string
		want string
	}{
		{"module neither released nor excluded", versions("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r, example.com/r/a]\n"),
			"versions.yaml: neither released nor excluded: example.com/r/b (b/go.mod)"},
		{"listed module not in the tree", versions("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r, example.com/r/a, example.com/r/c]\nexcluded-modules: [example.com/r/b]\n"),
			"versions.yaml: example.com/r/c (module set main) has no go.mod in the tree"},
		{"listed twice", versions("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r, example.com/r/a]\nexcluded-modules: [example.com/r/b, example.com/r/a]\n"),
			"versions.yaml: example.com/r/a is listed twice (module set main and excluded-modules)"},
		{"version not canonical", versions("module-sets:\n  main:\n    version: v0.1\n    modules: [example.com/r, example.com/r/a]\nexcluded-modules: [example.com/r/b]\n"),
			`versions.yaml: module set main: version "v0.1" is not a canonical semantic version`},
		{"major version the path does not carry", versions("module-sets:\n  main:\n    version: v2.0.0\n    modules: [example.com/r, example.com/r/a]\nexcluded-modules: [example.com/r/b]\n"),
			"versions.yaml: module set main: example.com/r@v2.0.0: invalid version"},
		{"empty set", versions("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r, example.com/r/a]\n  other:\n    version: v0.1.0\nexcluded-modules: [example.com/r/b]\n"),
			"versions.yaml: module set other lists no modules"},
		{"unknown field", versions("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r, example.com/r/a]\nexcluded: [example.com/r/b]\n"),
			"field excluded not found"},
		{"root not released", versions("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r/a]\nexcluded-modules: [example.com/r, example.com/r/b]\n"),
			"versions.yaml: the root module must be released"},
		{"module path not following its directory", map[string]*string{"b/go.mod": ptr("module example.com/other\n\ngo 1.25.0\n")},
			"b/go.mod: module example.com/other, want example.com/r/b"},
		{"no versions.yaml", map[string]*string{"versions.yaml": nil}, "versions.yaml: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(newRepo(t, tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadOutsideGit(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "git ls-files") {
		t.Fatalf("Load of a directory outside git: %v, want the git ls-files error", err)
	}
}

// TestWriteProxy checks the proxy's files: the zip of a nested module holds
// its own files, not its nested modules', plus the root LICENSE, and nothing
// .gitignore excludes.
func TestWriteProxy(t *testing.T) {
	dir := newRepo(t, map[string]*string{
		".gitignore":     ptr("/a/built-binary\n"),
		"a/built-binary": ptr("not source"),
		"a/sub/go.mod":   ptr("module example.com/r/a/sub\n"),
		"a/sub/s.go":     ptr("package sub\n"),
		"versions.yaml":  ptr("module-sets:\n  main:\n    version: v0.1.0\n    modules: [example.com/r, example.com/r/a]\nexcluded-modules: [example.com/r/b, example.com/r/a/sub]\n"),
	})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	proxy := t.TempDir()
	if err := WriteProxy(r, proxy); err != nil {
		t.Fatal(err)
	}
	v := module.Version{Path: "example.com/r/a", Version: "v0.1.0"}
	vdir := filepath.Join(proxy, "example.com", "r", "a", "@v")
	if _, err := modzip.CheckZip(v, filepath.Join(vdir, "v0.1.0.zip")); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(vdir, "v0.1.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, strings.TrimPrefix(f.Name, "example.com/r/a@v0.1.0/"))
	}
	slices.Sort(names)
	if want := []string{"LICENSE", "a.go", "go.mod"}; !slices.Equal(names, want) {
		t.Errorf("zip of example.com/r/a holds %q, want %q", names, want)
	}
	for name, want := range map[string]string{"list": "v0.1.0\n", "v0.1.0.mod": "module example.com/r/a\n"} {
		data, err := os.ReadFile(filepath.Join(vdir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), want) {
			t.Errorf("%s = %q, want it to start with %q", name, data, want)
		}
	}
	if _, err := os.Stat(filepath.Join(proxy, "example.com", "r", "b")); !os.IsNotExist(err) {
		t.Errorf("the excluded module b is in the proxy (stat: %v)", err)
	}
}

// TestTryEnv: the environment printed for trying the release names the
// tree's proxy by an absolute file URL, then the machine's GOPROXY (the
// tree's proxy holds none of the dependencies), and keeps the checksum
// database out of the repository's modules; GOPROXY=off adds nothing.
func TestTryEnv(t *testing.T) {
	r, err := Load(newRepo(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct{ goproxy, want string }{
		{"https://proxy.example,direct\n", "GOPROXY=file://" + filepath.ToSlash(filepath.Join(dir, "proxy")) + ",https://proxy.example,direct"},
		{"off\n", "GOPROXY=file://" + filepath.ToSlash(filepath.Join(dir, "proxy"))},
	} {
		env, err := TryEnv(r, "proxy", tc.goproxy)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{tc.want, "GONOSUMDB=" + r.Modules[0].Path}; !slices.Equal(env, want) {
			t.Errorf("TryEnv(%q) = %q, want %q", tc.goproxy, env, want)
		}
	}
}

// TestReadmeSnippets checks the repository's documents (SnippetFiles)
// against the snippet convention and that each snippet lands in a program
// that parses; compiling them needs the released modules, which
// TestRelease does.
func TestReadmeSnippets(t *testing.T) {
	snippets, err := ReadSnippets(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range SnippetNames {
		src, err := Program(snippets[name])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), snippets[name].Code) {
			t.Errorf("program of snippet %q does not hold it", name)
		}
	}
}

func TestExtractSnippetsRefuses(t *testing.T) {
	block := func(name, code string) string {
		return "<!-- release-test snippet \"" + name + "\" -->\n\n```go\n" + code + "\n```\n\n"
	}
	var all string
	for _, name := range SnippetNames {
		all += block(name, name+"()")
	}
	readme := func(text string) Doc { return Doc{Path: "README.md", Text: []byte(text)} }
	got, err := ExtractSnippets(readme("# T\n\n" + all))
	if err != nil {
		t.Fatal(err)
	}
	if s := got["fiber"]; s.Code != "fiber()\n" || s.Line != 12 || s.File != "README.md" {
		t.Errorf("fiber snippet = %+v, want code fiber() at line 12", s)
	}
	for _, tc := range []struct{ name, readme, want string }{
		{"missing", block("gin", "g()"), `no release-test snippet "fiber"`},
		{"unknown name", all + block("koa", "k()"), fmt.Sprintf(`README.md:%d: release-test snippet "koa": no template for it`, 1+6*len(SnippetNames))},
		{"twice", all + block("gin", "g()"), `release-test snippet "gin" is marked twice`},
		{"no block", "<!-- release-test snippet \"gin\" -->\ntext\n" + all, `README.md:1: release-test snippet "gin" is not followed by a ` + "```go block"},
		{"unclosed", all[:len(all)-7], `release-test snippet "redis": its ` + "```go block is never closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ExtractSnippets(readme(tc.readme)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ExtractSnippets: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestProgramPointsAtReadme(t *testing.T) {
	src, err := Program(Snippet{Name: "redis", File: "docs/EMBEDDING.md", Line: 42, Code: "store, err := x()\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "//line docs/EMBEDDING.md:42\nstore, err := x()\n//line redis.go.tmpl:") {
		t.Errorf("program does not map the snippet to docs/EMBEDDING.md:42:\n%s", src)
	}
	if _, err := Program(Snippet{Name: "nosuch"}); err == nil {
		t.Error("Program of a snippet with no template: no error")
	}
}

// A module's own internal packages, and another module's imported by a
// test file only, are no problem for the release.
func TestCheckInternalImportsAllowed(t *testing.T) {
	r, err := Load(newRepo(t, map[string]*string{
		"internal/x/x.go":   ptr("package x\n\n// X is internal to example.com/r.\nconst X = 1\n"),
		"a/internal/y/y.go": ptr("package y\n\n// Y is internal to example.com/r/a.\nconst Y = 1\n"),
		"a/a.go":            ptr("package a\n\nimport (\n\t\"example.com/r\"\n\t\"example.com/r/a/internal/y\"\n)\n\n// A uses r and its own y.\nconst A = r.R + y.Y\n"),
		"a/a_test.go":       ptr("package a\n\nimport (\n\t\"testing\"\n\n\t\"example.com/r/internal/x\"\n)\n\nfunc TestA(t *testing.T) { _ = x.X }\n"),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if errs := Check(r, Options{SkipTidy: true}); len(errs) > 0 {
		t.Fatalf("Check: %v", errs)
	}
}
