#!/usr/bin/env bash
# Says whether the tree can be released at the versions of versions.yaml and
# prints the tags to push, one per line (progress and problems go to stderr):
#
#   scripts/release/check.sh           # the checks, on the working tree
#   scripts/release/check.sh -clean    # also require a clean git tree (do this before tagging)
#   scripts/release/check.sh -proxy /tmp/proxy   # also write a module proxy to try the release,
#                                                # and print the environment to try it in:
#     GOPROXY=file:///tmp/proxy,$(go env GOPROXY) GONOSUMDB=github.com/petinventory/petinventory go get ...
#   (the tree's proxy first, for this repository's modules; then the default
#   proxy, for their dependencies, which the tree's proxy does not hold)
#
# Releasing: set the version in versions.yaml and in every sibling
# requirement (go.mod files), add the CHANGELOG.md entry, commit, then
#   scripts/release/check.sh -clean >/tmp/tags && xargs -n1 git tag </tmp/tags && git push origin $(cat /tmp/tags)
# The checks themselves are in internal/release (cmd/release-check).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go run ./internal/release/cmd/release-check "$@"
