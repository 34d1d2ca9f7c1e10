package release

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"gopkg.in/yaml.v3"
)

// VersionsFile is the name of the file, at the repository root, that lists
// every module and its version.
const VersionsFile = "versions.yaml"

// versionsDoc is the shape of versions.yaml, the one opentelemetry-go-contrib
// uses: named sets of modules released together at one version, and the
// modules never released.
type versionsDoc struct {
	ModuleSets map[string]struct {
		Version string   `yaml:"version"`
		Modules []string `yaml:"modules"`
	} `yaml:"module-sets"`
	ExcludedModules []string `yaml:"excluded-modules"`
}

// Module is one module of the repository.
type Module struct {
	Path      string        // module path, as its go.mod says
	Dir       string        // slash-separated directory from the repository root; "" for the root module
	Version   string        // version it is released at; "" for an excluded module
	Set       string        // name of its module set in versions.yaml; "" for an excluded module
	GoMod     *modfile.File // its parsed go.mod
	GoModData []byte        // its go.mod as written
}

// Released reports whether the module is tagged and published.
func (m *Module) Released() bool { return m.Version != "" }

// Tag is the git tag that releases the module at its version.
func (m *Module) Tag() string {
	if m.Dir == "" {
		return m.Version
	}
	return m.Dir + "/" + m.Version
}

// Repo is the repository as the release sees it: its root directory, its
// files (tracked and untracked but not ignored, as a commit of the tree
// would hold them) and its modules.
type Repo struct {
	Root    string
	Files   []string  // slash-separated paths from Root, sorted
	Modules []*Module // sorted by directory, the root module first
}

// Load reads the repository at root: its file list from git, every go.mod
// in it, and versions.yaml. It fails when versions.yaml cannot be read or
// does not describe the modules of the tree: a module neither released nor
// excluded, a listed module that does not exist, a version that is not a
// canonical semantic version valid for the module path, a module whose path
// does not follow from its directory.
func Load(root string) (*Repo, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	files, err := gitFiles(root)
	if err != nil {
		return nil, err
	}
	r := &Repo{Root: root, Files: files}

	byPath := map[string]*Module{}
	for _, f := range files {
		if path.Base(f) != "go.mod" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		mf, err := modfile.Parse(f, data, nil)
		if err != nil {
			return nil, err
		}
		if mf.Module == nil {
			return nil, fmt.Errorf("%s: no module line", f)
		}
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		m := &Module{Path: mf.Module.Mod.Path, Dir: dir, GoMod: mf, GoModData: data}
		if prev, ok := byPath[m.Path]; ok {
			return nil, fmt.Errorf("module %s is declared twice: in %s/go.mod and in %s/go.mod", m.Path, orDot(prev.Dir), orDot(dir))
		}
		byPath[m.Path] = m
		r.Modules = append(r.Modules, m)
	}
	sort.Slice(r.Modules, func(i, j int) bool { return r.Modules[i].Dir < r.Modules[j].Dir })
	if len(r.Modules) == 0 || r.Modules[0].Dir != "" {
		return nil, fmt.Errorf("%s: no go.mod at the repository root", root)
	}
	rootPath := r.Modules[0].Path
	for _, m := range r.Modules[1:] {
		// The go command finds the module of a tag "dir/vX.Y.Z" at dir, so
		// the module path must be the root path followed by dir.
		if want := rootPath + "/" + m.Dir; m.Path != want {
			return nil, fmt.Errorf("%s/go.mod: module %s, want %s (the root module path followed by the directory), or its tags would not find it", m.Dir, m.Path, want)
		}
	}

	if err := r.readVersions(byPath); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Repo) readVersions(byPath map[string]*Module) error {
	data, err := os.ReadFile(filepath.Join(r.Root, VersionsFile))
	if err != nil {
		return err
	}
	var doc versionsDoc
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", VersionsFile, err)
	}
	listed := map[string]string{} // module path → where versions.yaml lists it
	list := func(p, where string) error {
		if prev, ok := listed[p]; ok {
			return fmt.Errorf("%s: %s is listed twice (%s and %s)", VersionsFile, p, prev, where)
		}
		listed[p] = where
		if byPath[p] == nil {
			return fmt.Errorf("%s: %s (%s) has no go.mod in the tree", VersionsFile, p, where)
		}
		return nil
	}
	sets := make([]string, 0, len(doc.ModuleSets))
	for name := range doc.ModuleSets {
		sets = append(sets, name)
	}
	slices.Sort(sets)
	for _, name := range sets {
		set := doc.ModuleSets[name]
		if len(set.Modules) == 0 {
			return fmt.Errorf("%s: module set %s lists no modules", VersionsFile, name)
		}
		if !semver.IsValid(set.Version) || semver.Canonical(set.Version) != set.Version || semver.Build(set.Version) != "" {
			return fmt.Errorf("%s: module set %s: version %q is not a canonical semantic version such as v0.1.0", VersionsFile, name, set.Version)
		}
		for _, p := range set.Modules {
			if err := list(p, "module set "+name); err != nil {
				return err
			}
			if err := module.Check(p, set.Version); err != nil {
				return fmt.Errorf("%s: module set %s: %w", VersionsFile, name, err)
			}
			byPath[p].Version, byPath[p].Set = set.Version, name
		}
	}
	for _, p := range doc.ExcludedModules {
		if err := list(p, "excluded-modules"); err != nil {
			return err
		}
	}
	var missing []string
	for _, m := range r.Modules {
		if _, ok := listed[m.Path]; !ok {
			missing = append(missing, fmt.Sprintf("%s (%s/go.mod)", m.Path, orDot(m.Dir)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: neither released nor excluded: %s", VersionsFile, strings.Join(missing, ", "))
	}
	if !r.Modules[0].Released() {
		return errors.New(VersionsFile + ": the root module must be released")
	}
	return nil
}

// Released returns the released modules, the root module first.
func (r *Repo) Released() []*Module {
	var out []*Module
	for _, m := range r.Modules {
		if m.Released() {
			out = append(out, m)
		}
	}
	return out
}

// Module returns the module of the repository with the given path, or nil.
func (r *Repo) Module(p string) *Module {
	for _, m := range r.Modules {
		if m.Path == p {
			return m
		}
	}
	return nil
}

// Tags lists the tags that release every released module, root first.
func (r *Repo) Tags() []string {
	var tags []string
	for _, m := range r.Released() {
		tags = append(tags, m.Tag())
	}
	return tags
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
