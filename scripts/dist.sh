#!/usr/bin/env bash
# Cross-builds the agentmem command for linux, darwin and windows on amd64
# and arm64 (static, CGO_ENABLED=0) into dist/, with SHA256SUMS, so an MCP
# user needs no Go toolchain. `make dist` calls it; `make release` too.
#
#   scripts/dist.sh [VERSION]   (default: git describe)
#   PLATFORMS="linux/amd64 darwin/arm64" scripts/dist.sh   (a subset; none builds nothing)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VERSION="${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
OUT="$ROOT/dist"
mkdir -p "$OUT"
rm -f "$OUT"/agentmem-* "$OUT/SHA256SUMS"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
if [[ "$PLATFORMS" == none ]]; then echo "dist: PLATFORMS=none: nothing built" >&2; exit 0; fi
for platform in $PLATFORMS; do
  os="${platform%/*}" arch="${platform#*/}"
  ext=""; [[ "$os" == windows ]] && ext=".exe"
  bin="agentmem-$VERSION-$os-$arch$ext"
  echo "dist: $bin" >&2
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "-s -w" -o "$OUT/$bin" ./cmd/agentmem
done
(cd "$OUT" && sha256sum agentmem-"$VERSION"-* > SHA256SUMS)
echo "dist: $(wc -l < "$OUT/SHA256SUMS") binaries and SHA256SUMS in dist/" >&2
