#!/usr/bin/env bash
# Local storage-backend emulators for agentmem's tests.
#
#   scripts/emulators.sh install [postgres] [dynamodb] [firestore] [cosmos] # prerequisites only
#   scripts/emulators.sh images                                          # container images, built locally
#
# install only installs (go run ./testenv/cmd/emulators install: module
# testenv knows what each emulator needs, testenv/emulators.go): each test
# binary starts the emulators it needs from TestMain and stops them (module
# testenv: AGENTMEM_* endpoints win, else containers where Docker answers,
# else local processes).
#
# images builds agentmem-emulator/{postgres,dynamodb,firestore,cosmos}:local
# with `docker import` from the same local files the processes run (the
# PostgreSQL server, a JRE with DynamoDB Local or the Firestore emulator,
# Node with the patched Cosmos server, each with the shared libraries it
# links; their paths from `emulators paths`): no registry is needed.
# DOCKER_HOST selects the daemon.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# AGENTMEM_EMULATORS_CACHE: a private install dir, where testenv looks too.
export AGENTMEM_EMULATORS_CACHE="${AGENTMEM_EMULATORS_CACHE:-$ROOT/.cache/emulators}"
# testenv's installer runs apt-get through scripts/lib/apt.sh, which waits for another apt or
# dpkg to let go of the lock.
export AGENTMEM_APT_GET="${AGENTMEM_APT_GET:-$ROOT/scripts/lib/apt.sh}"
emulators() { (cd "$ROOT" && go run ./testenv/cmd/emulators "$@"); }

case "${1:-}" in
  install) shift; emulators install "$@" ;;
  images) shift; (($# == 0)) || { echo "usage: $0 images" >&2; exit 2; }
    emulators install
    exec "$ROOT/scripts/lib/images.sh" ;;
  *) echo "usage: $0 install [postgres] [dynamodb] [firestore] [cosmos]   (default: all four)" >&2
     echo "       $0 images" >&2; exit 2 ;;
esac
