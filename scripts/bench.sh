#!/usr/bin/env bash
# Runs the benchmarks of every module in one run; the backend benchmarks'
# emulators are started by their test binaries (testenv). Each benchmark
# reports backend requests per operation (req/op) and, for backends, latency
# ratios against a raw SDK call. Packages run one at a time (-p 1), so no
# other benchmark binary shares the machine with the one measuring.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mapfile -t MODULES < <(go list -m -f '{{.Dir}}' | sed "s#^$ROOT/##")
# The emulators their tests name (testenv.Main(m, testenv.Postgres)…), as module testenv reads them.
mapfile -t emulators < <(go run ./testenv/cmd/emulators needs "${MODULES[@]}")
if ((${#emulators[@]})); then
  # Each benchmark binary starts (and stops) the emulators it needs from
  # TestMain (module testenv); only the prerequisites are installed here.
  scripts/emulators.sh install "${emulators[@]}"
fi
# The retrieval benchmarks (e2e/internal/retrieval) read shared/retrieval/dev.json beside the clone
# (AGENTMEM_RETRIEVAL_DEV names another copy); without it they leave that set out, saying why, and
# run the project's own sets.
if [[ -z "${AGENTMEM_RETRIEVAL_DEV:-}" && -f "$ROOT/../shared/retrieval/dev.json" ]]; then
  export AGENTMEM_RETRIEVAL_DEV="$ROOT/../shared/retrieval/dev.json"
fi
pkgs=()
for m in "${MODULES[@]}"; do [[ "$m" == releasecheck ]] || pkgs+=("./$m/..."); done
AGENTMEM_EMULATORS="${AGENTMEM_EMULATORS:-processes}" go test -p 1 -run '^$' -bench . -benchmem "$@" "${pkgs[@]}"
