package server

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Build is what a binary of the server was built from.
type Build struct {
	Version   string // the server module's version: a tag, a pseudo-version, or (devel)
	Revision  string // the VCS revision, with -dirty for a modified tree; "unknown" when not recorded
	GoVersion string // the Go toolchain
}

// String is the line -version prints.
func (b Build) String() string {
	return fmt.Sprintf("inventory-server %s (revision %s, %s)", b.Version, b.Revision, b.GoVersion)
}

// version and revision are set by scripts/release/image.sh:
//
//	-ldflags "-X github.com/petinventory/petinventory/server.version=v0.1.0 -X …/server.revision=<commit>"
//
// Unset (go install, go build), BuildInfo reads them from the build info.
var version, revision string

// modulePath is the server module's path, to find its version in the
// build info of any main package that imports it.
const modulePath = "github.com/petinventory/petinventory/server"

// BuildInfo returns the build of this binary: what the linker was given
// (-X, as scripts/release/image.sh does), else what Go recorded (the
// server module's version as go install fetched it, the VCS revision of
// a build in a clone), and the Go version. -version prints it, the first
// log line and /metrics (inventory_build_info) show it.
func BuildInfo() Build {
	b := Build{Version: version, Revision: revision, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.GoVersion = bi.GoVersion
		if b.Version == "" {
			b.Version = moduleVersion(bi)
		}
		if b.Revision == "" {
			b.Revision = vcsRevision(bi)
		}
	}
	if b.Version == "" {
		b.Version = "unknown"
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}

// moduleVersion is the server module's version in bi: the main module's
// (inventory-server) or a dependency's (a program that imports package
// server).
func moduleVersion(bi *debug.BuildInfo) string {
	if bi.Main.Path == modulePath {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == modulePath {
			return m.Version
		}
	}
	return ""
}

// vcsRevision is the revision Go stamped on a build in a clone, with
// -dirty when the tree had changes; "" for a build from the module proxy.
func vcsRevision(bi *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}
