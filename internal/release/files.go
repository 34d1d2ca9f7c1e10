package release

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	modzip "golang.org/x/mod/zip"
)

// gitFiles lists the files a commit of the working tree would hold: tracked
// files that still exist and untracked files that .gitignore does not
// exclude. Building from this list rather than from a commit lets a
// developer try a release before committing, and never picks up ignored
// build output.
func gitFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %v: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		// A tracked file deleted from the working tree is not part of it.
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err != nil {
			continue
		}
		files = append(files, f)
	}
	slices.Sort(files)
	files = slices.Compact(files) // a file both tracked and unmerged appears twice
	return files, nil
}

// treeFile is a file of the working tree as a module zip sees it.
type treeFile struct {
	rel  string // path inside the module
	disk string // path on disk
}

func (f treeFile) Path() string                 { return f.rel }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.disk) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.disk) }

// dataFile is a file made up for the zip: the root LICENSE copied into a
// nested module, as the go command does when it zips a module from git.
type dataFile struct {
	rel  string
	data []byte
}

func (f dataFile) Path() string                 { return f.rel }
func (f dataFile) Lstat() (fs.FileInfo, error)  { return dataInfo(f), nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo dataFile

func (i dataInfo) Name() string       { return path.Base(i.rel) }
func (i dataInfo) Size() int64        { return int64(len(i.data)) }
func (i dataInfo) Mode() fs.FileMode  { return 0o444 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }

// ZipFiles lists the files of module m's zip: the files of the tree under
// its directory (modzip.Create and CheckFiles leave out those of nested
// modules themselves), plus the root LICENSE when a nested module has none
// of its own, which is what the go command adds when it serves a nested
// module straight from git.
func (r *Repo) ZipFiles(m *Module) []modzip.File {
	prefix := ""
	if m.Dir != "" {
		prefix = m.Dir + "/"
	}
	var out []modzip.File
	hasLicense := false
	for _, f := range r.Files {
		rel, ok := strings.CutPrefix(f, prefix)
		if !ok {
			continue
		}
		out = append(out, treeFile{rel: rel, disk: filepath.Join(r.Root, filepath.FromSlash(f))})
		hasLicense = hasLicense || rel == "LICENSE"
	}
	if !hasLicense && m.Dir != "" {
		if data, err := os.ReadFile(filepath.Join(r.Root, "LICENSE")); err == nil {
			out = append(out, dataFile{rel: "LICENSE", data: data})
		}
	}
	return out
}
