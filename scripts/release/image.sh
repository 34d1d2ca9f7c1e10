#!/usr/bin/env bash
# Builds the OCI image of inventory-server, or of the conformance suite
# inventory-conformance, and prints its name and size:
#
#   scripts/release/image.sh v0.1.0                    # image petinventory/inventory-server:v0.1.0, from the tag's tree
#   IMAGE=registry.example/inventory-server scripts/release/image.sh v0.1.0
#   PKG=./examples/redis scripts/release/image.sh dev  # another main package (the demo server)
#   PKG=./conformancetest/cmd/inventory-conformance scripts/release/image.sh v0.1.0
#                                                      # the suite: petinventory/inventory-conformance:v0.1.0
#
# A release version (vX.Y.Z[-pre]) is built from the tree of its tag,
# never from the working tree, and a dirty working tree is refused: the
# label, the tag (and the server's -version) then agree. The server's tag is
# server/vX.Y.Z (else vX.Y.Z); the suite is a release of its own, from
# conformancetest/vX.Y.Z (else vX.Y.Z). Any other name (dev, ci-…) builds
# the working tree, its revision marked -dirty when it has changes.
#
# Nothing is pulled from a registry: the binary is built here, static
# (CGO_ENABLED=0), with -trimpath and stripped (-s -w), and copied into
# `scratch` with
#   - the build machine's root CA bundle at /etc/ssl/certs/ca-certificates.crt,
#     where Go's crypto/x509 looks on Linux, so that rediss:// to a managed
#     Redis whose certificate a public CA signed works with no setting (a
#     private CA is INVENTORY_REDIS_CA_FILE, a mounted file), and the suite
#     reaches an https:// deployment. A file rather than roots compiled into
#     the binary: the code stays as it is, and the bundle is the one the
#     build machine's package manager keeps current, refreshed by
#     rebuilding the image;
#   - a minimal /etc/passwd and /etc/group naming the unprivileged user
#     65532 ("nonroot"), which the image runs as;
#   - the OCI labels org.opencontainers.image.title (the command's name),
#     .description, .documentation, .version, .source, .licenses and
#     .revision.
# The server is built with Gin's nomsgpack tag: it renders and binds no
# MessagePack, and the codec is a sixth of the binary; its image exposes
# 8080. The suite's image has /reports, owned by 65532, for the reports it
# writes (-junit /reports/junit.xml -html /reports/report.html) when a
# volume is mounted there.
#
# The image must be at most MAX_BYTES (default 40 MB, 40 000 000 bytes): a
# larger one fails the script, after printing its size. The container
# engine is podman when installed, else docker (ENGINE= overrides).
set -euo pipefail
cd "$(dirname "$0")/../.."

tag=${1:?usage: scripts/release/image.sh TAG   (e.g. v0.1.0)}
pkg=${PKG:-./server/cmd/inventory-server}
# What the image holds: the server (or another server, PKG=./examples/redis),
# or the conformance suite, a release of its own with its own name.
if [[ $(basename "$pkg") == inventory-conformance ]]; then
  cmd=inventory-conformance release_prefix=conformancetest
  IMAGE=${IMAGE:-petinventory/inventory-conformance}
  description="The petinventory conformance suite: checks a deployment of the Pet Store inventory API by its URL"
  documentation=conformancetest/README.md
  buildflags=(-ldflags "-s -w")
  expose= reports="COPY --chown=65532:65532 reports /reports"
else
  cmd=inventory-server release_prefix=server
  description="The Pet Store inventory API on Redis (petinventory's server)"
  documentation=docs/OPERATING.md
  expose="EXPOSE 8080" reports=
fi
image=${IMAGE:-petinventory/inventory-server}
max=${MAX_BYTES:-40000000}
source_url=https://github.com/petinventory/petinventory
cabundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}

if [[ -z ${ENGINE:-} ]]; then
  if command -v podman >/dev/null; then ENGINE=podman
  elif command -v docker >/dev/null; then ENGINE=docker
  else echo "image.sh: neither podman nor docker is installed (apt-get install podman runc)" >&2; exit 1
  fi
fi
engine=("$ENGINE")
# Debian's podman on a machine without systemd: cgroupfs, and runc (crun's
# default needs cgroup features these machines lack).
[[ $ENGINE == podman ]] && engine+=(--runtime runc --cgroup-manager=cgroupfs)

[[ -s $cabundle ]] || { echo "image.sh: no CA bundle at $cabundle (apt-get install ca-certificates, or set CA_BUNDLE)" >&2; exit 1; }

ctx=$(mktemp -d)     # the image's build context
tree=$(mktemp -d)    # a release's tree, from its tag
trap 'rm -rf "$ctx" "$tree"' EXIT

src=.
if [[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  if [[ -n $(git status --porcelain) ]]; then
    echo "image.sh: the working tree has changes; a release image ($tag) is built from its tag alone: commit or stash them first" >&2
    git status --short >&2
    exit 1
  fi
  revision=
  for ref in "$release_prefix/$tag" "$tag"; do
    revision=$(git rev-parse --verify --quiet "refs/tags/$ref^{commit}") && break
  done
  [[ -n $revision ]] || { echo "image.sh: no tag $release_prefix/$tag or $tag: tag the release first (a release image is built from its tag's tree)" >&2; exit 1; }
  src=$tree
  git archive "$revision" | tar -x -C "$src"
else
  revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  [[ $revision == unknown || -z $(git status --porcelain) ]] || revision+=-dirty
fi
if [[ $cmd == inventory-server ]]; then
  # Package server's version and revision: what -version, the first log
  # line and inventory_build_info show.
  buildflags=(-tags nomsgpack
    -ldflags "-s -w -X github.com/petinventory/petinventory/server.version=$tag -X github.com/petinventory/petinventory/server.revision=$revision")
fi
(cd "$src" && CGO_ENABLED=0 go build -trimpath "${buildflags[@]}" -o "$ctx/$cmd" "$pkg")
cp "$cabundle" "$ctx/ca-certificates.crt"
mkdir "$ctx/reports"
printf 'root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' >"$ctx/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$ctx/group"
cat >"$ctx/Containerfile" <<EOF
FROM scratch
COPY passwd /etc/passwd
COPY group /etc/group
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY $cmd /$cmd
$reports
USER 65532:65532
$expose
LABEL org.opencontainers.image.title="$cmd" \\
      org.opencontainers.image.description="$description" \\
      org.opencontainers.image.documentation="$source_url/blob/main/$documentation" \\
      org.opencontainers.image.version="$tag" \\
      org.opencontainers.image.revision="$revision" \\
      org.opencontainers.image.source="$source_url" \\
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/$cmd"]
EOF

"${engine[@]}" build --quiet -t "$image:$tag" -f "$ctx/Containerfile" "$ctx" >/dev/null

size=$("${engine[@]}" image inspect --format '{{.Size}}' "$image:$tag")
awk -v i="$image:$tag" -v s="$size" -v b="$(stat -c %s "$ctx/$cmd")" \
  'BEGIN { printf "%s: %d bytes (%.1f MB; the binary %.1f MB)\n", i, s, s / 1e6, b / 1e6 }'
if ((size > max)); then
  echo "image.sh: $image:$tag is $size bytes, over the limit of $max" >&2
  exit 1
fi
