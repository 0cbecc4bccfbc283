# Sourced by scripts/release.sh and scripts/modules.sh (not run).
#
# agentmem's modules live in one repository, github.com/agentmem/agentmem,
# tagged <module dir>/vX.Y.Z. with_local_modules runs a command with the go
# command fetching those modules straight from a local clone's tags (git,
# GOPROXY bypassed) and every other module as usual, so that nothing reaches
# the network for agentmem.

AGENTMEM_REPO="github.com/agentmem/agentmem"

# modules: the module directories of go.work, relative to the root.
modules() {
  local root; root="$(pwd)"
  go list -m -f '{{.Dir}}' | sed "s#^$root/##"
}

# installable_modules: the modules meant for `go install`/`go run …@version`.
# They carry no replace directives; every other module replaces its siblings
# with their directories (ignored by anyone who depends on it).
installable_modules() { echo examples; echo cmd/agentmem; }

# sibling_requirements: reads `go mod edit -json` on stdin and prints the
# agentmem modules it requires, one per line.
sibling_requirements() {
  awk '/^\t"Require": \[/ { in_req = 1; next }
       in_req && /^\t\]/ { in_req = 0 }
       in_req && /"Path": "github.com\/agentmem\/agentmem\// { gsub(/[",]/, "", $2); print $2 }'
}

# purge_local_modules: removes agentmem's modules from the module cache
# (its downloads, extracted trees and git clones), so that a version cut again
# from other commits is never read from the cache. Everything else in the
# cache stays, and so do the build cache's compiled packages.
purge_local_modules() {
  local cache f
  cache="$(go env GOMODCACHE)"
  [[ -d "$cache" ]] || return 0
  chmod -R u+w "$cache/$AGENTMEM_REPO" "$cache/cache/download/$AGENTMEM_REPO" 2>/dev/null || true
  rm -rf "$cache/$AGENTMEM_REPO" "$cache/$AGENTMEM_REPO@"* "$cache/cache/download/$AGENTMEM_REPO"
  for f in "$cache"/cache/vcs/*.info; do
    [[ -e "$f" ]] && grep -q "$AGENTMEM_REPO" "$f" 2>/dev/null || continue
    rm -rf "${f%.info}" "$f" "${f%.info}.lock"
  done
}

# with_local_modules REPO CMD [ARGS...]: runs CMD with agentmem's modules
# served from the git repository REPO (a directory) and the module cache
# purged of them before and after.
with_local_modules() {
  local repo="$1"; shift
  local rc=0
  purge_local_modules
  (
    export GOWORK=off GOFLAGS="-mod=mod"
    export GOPRIVATE="$AGENTMEM_REPO" GONOSUMDB="$AGENTMEM_REPO" GONOPROXY="$AGENTMEM_REPO"
    export GIT_CONFIG_COUNT=2 \
      GIT_CONFIG_KEY_0="url.file://$repo.insteadOf" GIT_CONFIG_VALUE_0="https://$AGENTMEM_REPO" \
      GIT_CONFIG_KEY_1="protocol.file.allow" GIT_CONFIG_VALUE_1="always"
    "$@"
  ) || rc=$?
  purge_local_modules
  return "$rc"
}
