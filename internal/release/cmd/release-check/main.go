// Command release-check says whether the petinventory tree can be released
// at the versions of versions.yaml, and prints the tags to push.
//
//	go run ./internal/release/cmd/release-check [-clean] [-proxy DIR] [-root DIR]
//
// It checks that every go.mod requires its siblings at the versions of
// versions.yaml, that go.work uses every module, that `go mod tidy -diff`
// is clean in every module (GOWORK=off), that every released module can be
// zipped and carries a LICENSE, that no released module imports another
// module's internal package, that every generated copy of a shared package
// (cmd/copyshared) is what its source makes, and that CHANGELOG.md has an
// entry for the version; with -clean, also that git reports no changes. Each problem is
// printed on its own line and the exit status is 1. When there is none, it
// prints one tag per line ("v0.1.0", "transport/gin/v0.1.0", ...) and, with
// -proxy, writes a file-system module proxy of the release to DIR and
// prints the environment to try it in: GOPROXY=file://DIR followed by the
// machine's own GOPROXY (the default proxy, for the dependencies), and
// GONOSUMDB for this repository's modules.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/petinventory/petinventory/internal/release"
)

func main() {
	root := flag.String("root", ".", "repository root")
	clean := flag.Bool("clean", false, "also require a git tree without changes")
	proxy := flag.String("proxy", "", "write a file-system module proxy of the release to this directory")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "release-check: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}

	repo, err := release.Load(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-check:", err)
		os.Exit(1)
	}
	if errs := release.Check(repo, release.Options{Clean: *clean}); len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintln(os.Stderr, "release-check:", err)
		}
		fmt.Fprintf(os.Stderr, "release-check: %d problem(s); not releasable\n", len(errs))
		os.Exit(1)
	}
	if *proxy != "" {
		if err := release.WriteProxy(repo, *proxy); err != nil {
			fmt.Fprintln(os.Stderr, "release-check:", err)
			os.Exit(1)
		}
		// The machine's GOPROXY after the tree's: the tree's proxy holds
		// only this repository's modules, not their dependencies.
		goproxy, _ := exec.Command("go", "env", "GOPROXY").Output()
		env, err := release.TryEnv(repo, *proxy, string(goproxy))
		if err != nil {
			fmt.Fprintln(os.Stderr, "release-check:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "release-check: module proxy written; try the release, in a module outside this repository, with\n  %s go get %s@%s\n",
			strings.Join(env, " "), repo.Modules[0].Path, repo.Modules[0].Version)
	}
	fmt.Fprintln(os.Stderr, "release-check: releasable; tags to push (git tag <tag> && git push origin <tag>):")
	for _, tag := range repo.Tags() {
		fmt.Println(tag)
	}
}
