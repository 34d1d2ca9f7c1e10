// Command copyshared copies a shared package of the repository (such as
// internal/logrepeat) into the current directory, the internal directory
// of a released module that uses it, so that the module never imports
// another module's internal package. A copy's gen.go runs it:
//
//	//go:generate go run ../../../../internal/release/cmd/copyshared -src ../../../../internal/logrepeat
//
// It writes each Go file of the source, its tests included, behind a
// "Code generated" line; the release package's tests fail when a copy differs from its
// source. Edit the source, then run `go generate ./...` in each module
// holding a copy.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/petinventory/petinventory/internal/release"
)

func main() {
	src := flag.String("src", "", "the shared package's directory, relative to the current one")
	flag.Parse()
	if *src == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: copyshared -src DIR (run in the copy's directory, by go generate)")
		os.Exit(2)
	}
	if err := run(*src); err != nil {
		fmt.Fprintln(os.Stderr, "copyshared:", err)
		os.Exit(1)
	}
}

func run(src string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := repoRoot(wd)
	if err != nil {
		return err
	}
	abs := filepath.Join(wd, src)
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return err
	}
	files, err := release.SharedFiles(root, filepath.ToSlash(rel))
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(wd, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// repoRoot is the directory above dir holding versions.yaml.
func repoRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, release.VersionsFile)); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s above %s: run in the repository", release.VersionsFile, dir)
		}
		d = parent
	}
}
