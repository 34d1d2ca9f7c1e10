package release

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	modzip "golang.org/x/mod/zip"
)

// ChangelogFile is the name of the change log at the repository root.
const ChangelogFile = "CHANGELOG.md"

// Options selects the optional checks of Check.
type Options struct {
	// Clean also requires a git tree without changes, as tagging needs.
	Clean bool
	// SkipTidy leaves out `go mod tidy -diff`, the only check that runs the
	// go command (and may download modules); unit tests use it.
	SkipTidy bool
}

// Check reports every reason the tree cannot be released as it is, each
// naming the file at fault, or nil when the tags of r.Tags() may be pushed:
//
//   - a go.mod requires a module of this repository at a version other than
//     the one versions.yaml gives it, or requires a module that is never
//     released, or replaces one with a directory that is not the module's;
//   - a released module holding a command (a main package, for `go install
//     …@version`, which refuses a module with replace directives) has a
//     replace directive;
//   - go.work does not use exactly the modules of the tree;
//   - `go mod tidy -diff` (with GOWORK=off) would change a go.mod or go.sum
//     (a module that requires its siblings without replacing them, a
//     command's, is tidied against a proxy of the tree, and only the go.sum
//     lines of its siblings may differ: their hashes exist once tagged);
//   - a released module could not be zipped (a file name module zips refuse,
//     a file too large) or its zip would have no LICENSE;
//   - a released module's package (a non-test file) imports an internal
//     package of another module of the repository: go's version
//     selection may pair the module with a later version of the other,
//     whose internal package changed (copy the helper into the module's
//     own internal directory instead, see cmd/copyshared);
//   - a copy of a shared package (a gen.go running cmd/copyshared) is not
//     what its source makes now: a file edited by hand, missing, or left
//     from a file the source no longer has (run go generate);
//   - CHANGELOG.md has no heading for a released version;
//   - with opts.Clean, git reports changes in the tree.
func Check(r *Repo, opts Options) []error {
	var errs []error
	errs = append(errs, r.checkRequirements()...)
	errs = append(errs, r.checkWorkspace()...)
	if !opts.SkipTidy {
		errs = append(errs, r.checkTidy()...)
	}
	errs = append(errs, r.checkZips()...)
	errs = append(errs, r.checkInternalImports()...)
	errs = append(errs, r.checkSharedCopies()...)
	errs = append(errs, r.checkChangelog()...)
	if opts.Clean {
		errs = append(errs, r.checkClean()...)
	}
	return errs
}

func (r *Repo) checkRequirements() []error {
	var errs []error
	for _, m := range r.Modules {
		file := path.Join(m.Dir, "go.mod")
		for _, req := range m.GoMod.Require {
			dep := r.Module(req.Mod.Path)
			switch {
			case dep == nil:
				continue
			case !dep.Released():
				errs = append(errs, fmt.Errorf("%s requires %s, which versions.yaml excludes from releases", file, dep.Path))
			case req.Mod.Version != dep.Version:
				errs = append(errs, fmt.Errorf("%s requires %s %s; versions.yaml releases it at %s", file, dep.Path, req.Mod.Version, dep.Version))
			}
		}
		if m.Released() && len(m.GoMod.Replace) > 0 && r.hasCommand(m) {
			errs = append(errs, fmt.Errorf("%s has replace directives, but the module holds a command, which `go install %s/…@%s` then refuses; the workspace (go.work) resolves the siblings instead", file, m.Path, m.Version))
		}
		for _, rep := range m.GoMod.Replace {
			dep := r.Module(rep.Old.Path)
			if dep == nil || !modfile.IsDirectoryPath(rep.New.Path) {
				continue
			}
			got := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.FromSlash(m.Dir), filepath.FromSlash(rep.New.Path))))
			if got != orDot(dep.Dir) {
				errs = append(errs, fmt.Errorf("%s replaces %s with %s, which is not that module's directory (%s)", file, dep.Path, rep.New.Path, orDot(dep.Dir)))
			}
		}
	}
	return errs
}

func (r *Repo) checkWorkspace() []error {
	data, err := os.ReadFile(filepath.Join(r.Root, "go.work"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return []error{err}
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return []error{err}
	}
	used := map[string]bool{}
	var errs []error
	for _, u := range wf.Use {
		dir := filepath.ToSlash(filepath.Clean(filepath.FromSlash(u.Path)))
		used[dir] = true
		if r.moduleAtDir(dir) == nil {
			errs = append(errs, fmt.Errorf("go.work uses %s, which holds no module of the tree", u.Path))
		}
	}
	for _, m := range r.Modules {
		if !used[orDot(m.Dir)] {
			errs = append(errs, fmt.Errorf("go.work does not use %s (module %s)", orDot(m.Dir), m.Path))
		}
	}
	return errs
}

func (r *Repo) moduleAtDir(dir string) *Module {
	for _, m := range r.Modules {
		if orDot(m.Dir) == dir {
			return m
		}
	}
	return nil
}

func (r *Repo) checkTidy() []error {
	var errs []error
	proxy := ""    // a proxy of the tree, for the modules that need one
	modcache := "" // and a module cache of their own
	var proxyEnv []string
	defer func() {
		if proxy != "" {
			os.RemoveAll(proxy)
			os.RemoveAll(modcache)
		}
	}()
	for _, m := range r.Modules {
		cmd := exec.Command("go", "mod", "tidy", "-diff")
		cmd.Dir = filepath.Join(r.Root, filepath.FromSlash(m.Dir))
		// Outside the workspace, as a consumer builds the module; with no
		// inherited -mod flag, which tidy refuses.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		viaProxy := r.requiresUnreplacedSibling(m)
		if viaProxy {
			if proxy == "" {
				dir, err := os.MkdirTemp("", "release-check-proxy")
				if err == nil {
					err = WriteProxy(r, dir)
				}
				if err == nil {
					modcache, err = os.MkdirTemp("", "release-check-modcache")
				}
				if err != nil {
					return append(errs, fmt.Errorf("a module proxy of the tree, to tidy %s: %w", m.Path, err))
				}
				proxy = dir
				// A module cache of its own: the machine's may hold this
				// repository's modules at the same version from an older
				// tree (an earlier run's proxy), which go would take instead
				// of the tree's. The machine's cache still serves the other
				// modules, as a proxy after the tree's, so nothing is
				// downloaded twice.
				goproxy, _ := exec.Command("go", "env", "GOPROXY").Output()
				gomodcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
				proxyEnv = []string{
					"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(string(gomodcache)), "cache", "download")) + "," + strings.TrimSpace(string(goproxy)),
					"GOMODCACHE=" + modcache, "GOFLAGS=-modcacherw", "GONOSUMDB=" + r.Modules[0].Path,
				}
			}
			cmd.Env = append(cmd.Env, proxyEnv...)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil && !(viaProxy && onlySiblingSums(out.String(), r.Modules[0].Path)) {
			errs = append(errs, fmt.Errorf("%s: `GOWORK=off go mod tidy -diff` fails (%v); run `go mod tidy` there:\n%s", path.Join(m.Dir, "go.mod"), err, strings.TrimSpace(out.String())))
		}
	}
	return errs
}

func (r *Repo) checkZips() []error {
	var errs []error
	for _, m := range r.Released() {
		cf, err := modzip.CheckFiles(r.ZipFiles(m))
		for _, fe := range cf.Invalid {
			errs = append(errs, fmt.Errorf("%s: module zips of %s refuse this file: %v", path.Join(m.Dir, fe.Path), m.Path, fe.Err))
		}
		if err != nil && len(cf.Invalid) == 0 {
			errs = append(errs, fmt.Errorf("module %s cannot be zipped: %w", m.Path, err))
		}
		if !slices.Contains(cf.Valid, "LICENSE") {
			errs = append(errs, fmt.Errorf("module %s: its zip would have no LICENSE (none in %s, none at the root)", m.Path, orDot(m.Dir)))
		}
	}
	return errs
}

// checkInternalImports refuses a released module whose non-test Go files
// import an internal package of another module of the repository. Go
// allows it by path (the importer's path is under the internal
// directory's parent), but each module is versioned on its own: a user's
// build may pair this module with a later version of the other, in which
// the internal package changed or is gone. Test files are left out: they
// are compiled only in the repository, where every module is at the same
// commit.
func (r *Repo) checkInternalImports() []error {
	var errs []error
	for _, m := range r.Released() {
		for _, f := range r.ZipFiles(m) {
			name := f.Path()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			file := path.Join(m.Dir, name)
			if r.moduleOfFile(file) != m {
				continue // a nested module's, not in m's zip
			}
			rc, err := f.Open()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			pf, err := parser.ParseFile(token.NewFileSet(), name, rc, parser.ImportsOnly)
			rc.Close()
			if err != nil {
				continue // not Go the compiler reads (a build-ignored template); zips carry it as is
			}
			for _, imp := range pf.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil || !isInternalPath(p) {
					continue
				}
				if owner := r.moduleOfImport(p); owner != nil && owner != m {
					errs = append(errs, fmt.Errorf("%s imports %s, an internal package of module %s: a user's build may pair %s %s with another version of it; copy the package into %s's own internal directory (go:generate, see internal/release/cmd/copyshared)",
						file, p, owner.Path, m.Path, m.Version, m.Path))
				}
			}
		}
	}
	return errs
}

// isInternalPath reports whether import path p has an "internal" element.
func isInternalPath(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "internal")
}

// moduleOfImport is the module of the repository holding package p: the
// one with the longest module path that is p or a prefix of it; nil for a
// package of no module of the repository.
func (r *Repo) moduleOfImport(p string) *Module {
	var best *Module
	for _, m := range r.Modules {
		if (p == m.Path || strings.HasPrefix(p, m.Path+"/")) && (best == nil || len(m.Path) > len(best.Path)) {
			best = m
		}
	}
	return best
}

// moduleOfFile is the module holding file (slash-separated, from the
// root): the one with the longest directory that contains it.
func (r *Repo) moduleOfFile(file string) *Module {
	best := r.Modules[0]
	for _, m := range r.Modules[1:] {
		if strings.HasPrefix(file, m.Dir+"/") && len(m.Dir) > len(best.Dir) {
			best = m
		}
	}
	return best
}

func (r *Repo) checkChangelog() []error {
	data, err := os.ReadFile(filepath.Join(r.Root, ChangelogFile))
	if err != nil {
		return []error{fmt.Errorf("%s: %w", ChangelogFile, err)}
	}
	var errs []error
	seen := map[string]bool{}
	for _, m := range r.Released() {
		if seen[m.Version] {
			continue
		}
		seen[m.Version] = true
		// "## v0.1.0", "## [v0.1.0] - 2026-11-23" and the like.
		heading := regexp.MustCompile(`(?m)^## \[?` + regexp.QuoteMeta(m.Version) + `\]?(\s|$)`)
		if !heading.Match(data) {
			errs = append(errs, fmt.Errorf("%s has no entry for %s (a heading \"## %s\")", ChangelogFile, m.Version, m.Version))
		}
	}
	return errs
}

func (r *Repo) checkClean() []error {
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = r.Root
	out, err := cmd.Output()
	if err != nil {
		return []error{fmt.Errorf("git status: %w", err)}
	}
	if s := strings.TrimRight(string(out), "\n"); s != "" {
		return []error{fmt.Errorf("the git tree has changes; commit them before tagging:\n%s", s)}
	}
	return nil
}

// requiresUnreplacedSibling reports whether m requires a module of the
// tree without replacing it by its directory.
func (r *Repo) requiresUnreplacedSibling(m *Module) bool {
	replaced := map[string]bool{}
	for _, rep := range m.GoMod.Replace {
		replaced[rep.Old.Path] = true
	}
	for _, req := range m.GoMod.Require {
		if r.Module(req.Mod.Path) != nil && !replaced[req.Mod.Path] {
			return true
		}
	}
	return false
}

// hasCommand reports whether m's zip holds a main package.
func (r *Repo) hasCommand(m *Module) bool {
	for _, f := range r.ZipFiles(m) {
		name := f.Path()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), name, rc, parser.PackageClauseOnly)
		rc.Close()
		if err == nil && pf.Name.Name == "main" {
			return true
		}
	}
	return false
}

// onlySiblingSums reports whether a `go mod tidy -diff` output changes
// nothing but go.sum lines of modules under root (the repository's own,
// whose hashes exist only once they are tagged).
func onlySiblingSums(diff, root string) bool {
	inSum, changed := false, false
	for line := range strings.Lines(diff) {
		switch {
		case strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ "):
			inSum = strings.HasSuffix(strings.TrimSpace(line), "go.sum")
		case strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-"):
			if !inSum || !strings.HasPrefix(line[1:], root+" ") && !strings.HasPrefix(line[1:], root+"/") {
				return false
			}
			changed = true
		case strings.HasPrefix(line, "diff ") || strings.HasPrefix(line, "go: downloading ") || strings.HasPrefix(line, "@@") || strings.HasPrefix(line, " ") || strings.TrimSpace(line) == "":
		default:
			return false // an error, not a diff
		}
	}
	return changed
}
