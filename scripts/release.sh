#!/usr/bin/env bash
# Prepares a release locally; never pushes. `make release VERSION=vX.Y.Z` calls it.
#
#   scripts/release.sh vX.Y.Z
#
# 1. refuses a dirty tree, a version that is not vMAJOR.MINOR.PATCH[-PRERELEASE],
#    and a version that any module's tag already uses;
# 2. requires every sibling module at that version in every go.mod;
# 3. tidies every library module (their replace directives point at the
#    siblings' directories, so this needs no tag) and commits "release vX.Y.Z";
# 4. tags every module at that commit: core/vX.Y.Z, sqlite/vX.Y.Z, …;
# 5. tidies the installable modules (no replace directives: `go install …@vX.Y.Z`
#    must work), whose go.sum needs the siblings' hashes at the new tags: the
#    siblings are fetched from this repository itself (see scripts/lib/local-modules.sh),
#    then the release commit is amended and the tags moved to it. The library
#    modules' files do not change in that amend, so their hashes stay true.
#
# Pushing is yours: git push origin main 'refs/tags/*/vX.Y.Z'.
set -euo pipefail
ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)"
cd "$ROOT"
# shellcheck source=lib/local-modules.sh
. scripts/lib/local-modules.sh

die() { printf 'release: %s\n' "$*" >&2; exit 1; }

VERSION="${1:-}"
[[ -n "$VERSION" ]] || die "give the version to release: make release VERSION=vX.Y.Z"
[[ "$VERSION" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$ ]] ||
  die "version $VERSION is malformed: want vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRERELEASE (semver, leading v)"
[[ "${BASH_REMATCH[1]}" == 0 || "${BASH_REMATCH[1]}" == 1 ]] ||
  die "version $VERSION needs a /v${BASH_REMATCH[1]} suffix on every module path first (Go's major version rule)"
[[ -z "$(git status --porcelain)" ]] || die "the work tree is dirty: commit or stash first (git status)"
used="$(git tag -l "*/$VERSION" "$VERSION")"
[[ -z "$used" ]] || die "version $VERSION is already used by tags: $(echo $used)"

mapfile -t MODULES < <(modules)
mapfile -t INSTALLABLE < <(installable_modules)
is_installable() { local m; for m in "${INSTALLABLE[@]}"; do [[ "$m" == "$1" ]] && return 0; done; return 1; }

echo "release: $VERSION for ${MODULES[*]}"
for m in "${MODULES[@]}"; do
  for dep in $(go mod edit -json "$m/go.mod" | sibling_requirements); do
    go mod edit -require="$dep@$VERSION" "$m/go.mod"
  done
done
# go.work replaces, at the version the requirements name, a sibling that only
# an installable module requires (no library module's replace directive
# points the workspace at it): move it to the new version.
# (sed, not go work edit, which drops go.work's comments)
sed -i -E "s#^(replace $AGENTMEM_REPO/[^ ]+) v[^ ]+ => #\1 $VERSION => #" go.work
for m in "${MODULES[@]}"; do
  is_installable "$m" && continue
  (cd "$m" && GOWORK=off go mod tidy)
done
git add -A
git commit -q -m "release $VERSION"
tag_all() {
  local m
  for m in "${MODULES[@]}"; do git tag -f "$m/$VERSION" >/dev/null; done
}
tag_all

# The installable modules resolve their siblings at the new tags, served
# from this repository.
with_local_modules "$ROOT" bash -c '
  for m in "$@"; do (cd "$m" && GOWORK=off go mod tidy); done' _ "${INSTALLABLE[@]}"
if [[ -n "$(git status --porcelain)" ]]; then
  git add -A
  git commit -q --amend --no-edit
  tag_all
fi
echo "release: committed $(git rev-parse --short HEAD) \"release $VERSION\" and tagged:"
for m in "${MODULES[@]}"; do echo "  $m/$VERSION"; done
tags=(); for m in "${MODULES[@]}"; do tags+=("$m/$VERSION"); done
echo "release: nothing was pushed; to publish: git push origin HEAD ${tags[*]}"
