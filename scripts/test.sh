#!/usr/bin/env bash
# Runs every test: vet, the modules' shape (tidy with GOWORK=off, one go
# directive, one version per dependency), unit tests with the race detector,
# the contract suite against every backend on real emulators (each test
# binary's TestMain starts its own with module testenv, as local processes,
# and stops them by process group), the four backend packages once more on
# containers (scripts/containers.sh), and a candidate release installed from
# outside the repository (module releasecheck). `make test` calls this.
#
#   TESTFLAGS           extra flags for go test (e.g. TESTFLAGS=-v)
#   AGENTMEM_*          endpoints that win over starting an emulator (testenv)
#   AGENTMEM_EMULATORS  the main run's path: processes (default) or containers
#   AGENTMEM_CONTAINER_TESTS=0  leaves the container run out, saying so
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib/apt.sh
. scripts/lib/apt.sh # apt_get: apt-get once no other apt or dpkg holds the lock
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
# Without the race detector's second of sleep at every race-built process's
# exit (atexit_sleep_ms): one per test binary, and more where tests start
# the binary again.
export GORACE="${GORACE:+$GORACE }atexit_sleep_ms=0"

# Modules, in go.work order.
mapfile -t MODULES < <(go list -m -f '{{.Dir}}' | sed "s#^$ROOT/##")
# Their packages, as go command patterns (./core/...).
mapfile -t PATTERNS < <(printf './%s/...\n' "${MODULES[@]}")
# The emulators their tests name (testenv.Main(m, testenv.Postgres)…), as module testenv reads them.
mapfile -t emulators < <(go run ./testenv/cmd/emulators needs "${MODULES[@]}")

echo "== gofmt, go vet"
unformatted="$(gofmt -l "${MODULES[@]}")"
if [[ -n "$unformatted" ]]; then echo "gofmt would change (run make fmt): $unformatted" >&2; exit 1; fi
# One go vet over every module's packages (the workspace resolves them as each module's own
# directory would): it loads and checks them in parallel, 2 s against 14 s a module at a time.
go vet "${PATTERNS[@]}"

echo "== modules (GOWORK=off)"
scripts/modules.sh check

if ((${#emulators[@]})); then
  echo "== emulator prerequisites: ${emulators[*]}"
  scripts/emulators.sh install "${emulators[@]}"
fi

echo "== browser test prerequisites (console's TestBrowser*): Debian's chromium, playwright-core"
# apt-get through scripts/lib/apt.sh: it waits for another apt or dpkg to let go of the lock.
[[ -x /usr/bin/chromium ]] || { apt_get update -qq && apt_get install -y -qq chromium; }
(cd console/browsertest && npm ci --no-audit --no-fund --silent)

echo "== go test (emulators: ${AGENTMEM_EMULATORS:-processes}, started by each test binary)"
pkgs=()
# releasecheck (a candidate release installed from outside) runs last, alone.
for p in "${PATTERNS[@]}"; do [[ "$p" == ./releasecheck/... ]] || pkgs+=("$p"); done
# shellcheck disable=SC2086
AGENTMEM_EMULATORS="${AGENTMEM_EMULATORS:-processes}" go test -race -count=1 -timeout 30m ${TESTFLAGS:-} "${pkgs[@]}"

# releasecheck (a candidate release installed from outside; -update rewrites its goldens) builds
# while the container run mostly waits on docker: it runs beside it, its output kept and printed
# after it, and either failing fails the run.
echo "== a candidate release, installed from outside the repository (releasecheck), beside the container run"
releaselog="$(mktemp)"
# In its own process group (setsid), so that a failure of the container run stops all of it.
# shellcheck disable=SC2086
setsid go test -count=1 -timeout 30m ${TESTFLAGS:-} ./releasecheck/ >"$releaselog" 2>&1 &
releasepid=$!
trap 'kill -- -"$releasepid" 2>/dev/null || true; rm -f "$releaselog"' EXIT

if [[ "${AGENTMEM_CONTAINER_TESTS:-1}" == 0 ]]; then
  echo "== the container path is NOT tested in this run (AGENTMEM_CONTAINER_TESTS=0)"
else
  # A reduced case set: opening by URL, and the contract's CAS, receipts,
  # concurrency, search and metadata cases in both modes. The whole four
  # packages on containers took 486 s against 374 s on processes (vfs, a
  # busy 2-core machine), on top of building the images; AGENTMEM_CONTAINER_RUN=.
  # runs them all.
  run="${AGENTMEM_CONTAINER_RUN-TestOpenURL\$|TestConformance/[^/]+/(full|primitives)/(capabilities|cas_contract|receipt_write_replay|receipt_delete_replay|concurrent_appends|search_scoped|metadata_roundtrip|cross_instance_cas)\$}"
  echo "== the backends again, on containers (testcontainers-go): -run '$run'"
  scripts/containers.sh -run "$run" ./postgres/... ./dynamodb/... ./firestore/... ./cosmosdb/...
fi

echo "== releasecheck's output"
releasecode=0
wait "$releasepid" || releasecode=$?
cat "$releaselog"
if ((releasecode)); then echo "releasecheck failed (exit $releasecode)" >&2; fi
exit "$releasecode"
