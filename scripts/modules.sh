#!/usr/bin/env bash
# Keeps the go.mod files of agentmem's modules in one shape.
#
#   scripts/modules.sh tidy    # make it so: `make tidy`
#   scripts/modules.sh check   # fail, saying what to fix, unless it is so (make test)
#
# The shape: one `go` directive for all modules; a dependency that several
# modules require is required at one version (the workspace's, `go work
# sync`); every library module replaces each sibling it requires with the
# sibling's directory (so it builds and tidies with GOWORK=off before any tag
# exists; a replace directive is ignored by whoever depends on the module);
# an installable module has no replace directive (`go install …@vX.Y.Z`
# refuses one); every library module is tidy (`go mod tidy -diff`) and vets
# with GOWORK=off. Installable modules are tidied and vetted against real
# tags by module releasecheck (go test ./releasecheck/).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib/local-modules.sh
. scripts/lib/local-modules.sh

GO_DIRECTIVE="$(go mod edit -json core/go.mod | awk -F'"' '/^\t"Go":/ { print $4 }')"
mapfile -t MODULES < <(modules)
mapfile -t INSTALLABLE < <(installable_modules)
is_installable() { local m; for m in "${INSTALLABLE[@]}"; do [[ "$m" == "$1" ]] && return 0; done; return 1; }

# requirements: "path version module" for every require line of every module.
requirements() {
  local m
  for m in "${MODULES[@]}"; do
    go mod edit -json "$m/go.mod" | awk -v m="$m" '
      /^\t"Require": \[/ { r = 1; next }
      r && /^\t\]/ { r = 0 }
      r && /"Path"/ { gsub(/[",]/, "", $2); p = $2 }
      r && /"Version"/ { gsub(/[",]/, "", $2); print p, $2, m }'
  done
}

tidy() {
  local m i
  for m in "${MODULES[@]}"; do go mod edit -go="$GO_DIRECTIVE" "$m/go.mod"; done
  # Sync and tidy until nothing moves: tidy can add a requirement that sync
  # then raises to the workspace's version.
  for i in 1 2 3 4; do
    sync_versions
    for m in "${MODULES[@]}"; do
      is_installable "$m" && continue
      (cd "$m" && GOWORK=off go mod tidy)
    done
    [[ -z "$(split_versions)" ]] && return 0
  done
  echo "modules: versions still differ after tidying:" >&2
  split_versions >&2
  return 1
}

# sync_versions: requires every dependency at the workspace's version (what
# `go work sync` does, also for a module whose siblings are not tagged yet).
sync_versions() {
  local path ver m have
  declare -A selected=()
  while read -r path ver; do selected[$path]="$ver"; done < <(go list -m -f '{{if not .Main}}{{.Path}} {{.Version}}{{end}}' all)
  while read -r path have m; do
    [[ "$path" == "$AGENTMEM_REPO/"* ]] && continue
    ver="${selected[$path]:-}"
    if [[ -n "$ver" && "$ver" != "$have" ]]; then go mod edit -require="$path@$ver" "$m/go.mod"; fi
  done < <(requirements)
}

# split_versions: dependencies required at more than one version.
split_versions() {
  requirements | grep -v "^$AGENTMEM_REPO/" | sort | awk '
    { if (($1 in v) && v[$1] != $2) bad[$1] = 1; v[$1] = $2; at[$1] = at[$1] " " $3 "@" $2 }
    END { for (p in bad) print "  " p ":" at[p] }' | sort
}

check() {
  local m dep fail=0 out
  for m in "${MODULES[@]}"; do
    local g; g="$(go mod edit -json "$m/go.mod" | awk -F'"' '/^\t"Go":/ { print $4 }')"
    if [[ "$g" != "$GO_DIRECTIVE" ]]; then
      echo "modules: $m/go.mod says go $g, core says go $GO_DIRECTIVE: run make tidy" >&2; fail=1
    fi
    local replaces; replaces="$(go mod edit -json "$m/go.mod" | awk '/^\t"Replace": \[/ { r = 1; next } r && /^\t\]/ { r = 0 } r && /"Old": \{/ { o = 1 } o && /"Path"/ { gsub(/[",]/, "", $2); print $2; o = 0 }')"
    if is_installable "$m"; then
      if [[ -n "$replaces" ]]; then
        echo "modules: $m is installable (go install …@version) and must not have replace directives: $(echo $replaces)" >&2; fail=1
      fi
      continue
    fi
    for dep in $(go mod edit -json "$m/go.mod" | sibling_requirements); do
      if ! grep -qx "$dep" <<<"$replaces"; then
        echo "modules: $m requires $dep without replacing it with ../${dep#"$AGENTMEM_REPO"/}: add the replace directive" >&2; fail=1
      fi
    done
    if ! out="$(cd "$m" && GOWORK=off go mod tidy -diff 2>&1)"; then
      echo "modules: $m is not tidy with GOWORK=off (run make tidy):" >&2; echo "$out" | head -40 >&2; fail=1
    fi
    if ! out="$(cd "$m" && GOWORK=off go vet ./... 2>&1)"; then
      echo "modules: go vet with GOWORK=off fails in $m:" >&2; echo "$out" | head -40 >&2; fail=1
    fi
  done
  out="$(split_versions)"
  if [[ -n "$out" ]]; then
    echo "modules: dependencies required at different versions (run make tidy):" >&2; echo "$out" >&2; fail=1
  fi
  return "$fail"
}

case "${1:-}" in
  tidy) tidy ;;
  check) check && echo "modules: ${#MODULES[@]} modules tidy, one go directive ($GO_DIRECTIVE), one version per dependency" ;;
  *) echo "usage: $0 tidy|check" >&2; exit 2 ;;
esac
