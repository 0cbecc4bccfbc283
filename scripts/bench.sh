#!/usr/bin/env bash
# Runs the benchmarks of every module in one run, with the emulators the
# backend benchmarks need. Each benchmark reports backend requests per
# operation (req/op) and, for backends, latency ratios against a raw SDK call.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mapfile -t MODULES < <(go list -m -f '{{.Dir}}' | sed "s#^$ROOT/##")
declare -A NEEDS=([postgres]=postgres [dynamodb]=dynamodb [firestore]=firestore [cosmosdb]=cosmos
  [cmd/agentmem]="postgres dynamodb")
emulators=()
for m in "${MODULES[@]}"; do
  # Only modules that have tests yet need their emulator.
  if [[ -n "${NEEDS[$m]:-}" ]] && [[ -n "$(find "$m" -name '*_test.go' -print -quit)" ]]; then
    for e in ${NEEDS[$m]}; do
      [[ " ${emulators[*]} " == *" $e "* ]] || emulators+=("$e")
    done
  fi
done
if ((${#emulators[@]})); then
  trap 'scripts/emulators.sh stop' EXIT
  scripts/emulators.sh start "${emulators[@]}"
  # shellcheck disable=SC1091
  . "${AGENTMEM_RUN_DIR:-.cache/run}/emulators.env"
fi
pkgs=()
for m in "${MODULES[@]}"; do pkgs+=("./$m/..."); done
go test -run '^$' -bench . -benchmem "$@" "${pkgs[@]}"
