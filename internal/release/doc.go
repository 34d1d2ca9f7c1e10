// Package release holds the release mechanics of the petinventory
// repository: the list of modules and their versions (versions.yaml at the
// repository root), the checks that say whether the tree can be tagged, and
// a file-system module proxy built from the tree, so that a release can be
// tried with `go get` before anything is pushed.
//
// Every module of the repository is either released, at the version of its
// module set, or excluded (examples and tests that nobody imports). A
// release is one commit tagged once per released module: "v0.1.0" for the
// root module, "transport/gin/v0.1.0" for the module in transport/gin, as
// the go command expects for nested modules.
//
// Beside the release itself it holds the checks that read the whole tree
// across modules: docs/API.md against the exported names (TestAPIDoc), the
// generated copies of shared packages against their source
// (TestSharedCopiesMatch), and the length of every function of shipped
// code, at most MaxFuncLines lines in every module (TestFunctionsShort).
//
// The module is test-only: nothing outside this repository imports it, and
// it is never tagged. scripts/release/check.sh runs its command
// (cmd/release-check); TestRelease (run by .ci/run with
// PETINVENTORY_RELEASE_TEST=1) plays a new user against the proxy.
package release
