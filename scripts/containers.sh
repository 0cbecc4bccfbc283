#!/usr/bin/env bash
# Runs go test with the emulators in containers (testcontainers-go, module
# testenv), from images built here from local files: no registry is needed.
#
#   scripts/containers.sh [go test args...]   (default: the four backend packages)
#
# Where no Docker daemon answers and this runs as root, it installs Debian's
# docker.io if missing and starts a private dockerd (vfs storage; its data
# root under .cache/docker-data; its socket, exec root with containerd's
# sockets, pid file and log in a private directory under /tmp, since a unix
# socket's path holds at most 107 bytes and a clone's path can be long),
# then builds the images (scripts/emulators.sh images). After the tests it builds the
# agentmem image (Dockerfile) and smoke-tests it (cmd/agentmem/imagetest,
# -tags image). On exit it removes every container
# labelled agentmem.testenv; a daemon it started is stopped by its PID and
# its data root (images included) deleted, so nothing is left behind. With a
# daemon that was already running, the images are kept as a cache (remove
# them with `docker rmi agentmem-emulator/{postgres,dynamodb,firestore,cosmos}:local`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib/apt.sh
. scripts/lib/apt.sh # apt_get: apt-get once no other apt or dpkg holds the lock
DATA="$ROOT/.cache/docker-data" # a private dockerd's data root (images, layers): no sockets
RUN=""                         # its sockets, exec root, pid file and log: mktemp -d /tmp/am-XXXXXX
log() { printf '[containers] %s\n' "$*" >&2; }
die() { printf '[containers] ERROR: %s\n' "$*" >&2; exit 1; }
now() { local t="${EPOCHREALTIME:-$(date +%s.%N)}"; printf '%s' "${t/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

if (($# == 0)); then set -- ./postgres/... ./dynamodb/... ./firestore/... ./cosmosdb/...; fi

started=0
had_bridge=1
cleanup() {
  local ids
  if ids="$(docker ps -aq --filter label=agentmem.testenv 2>/dev/null)" && [[ -n "$ids" ]]; then
    log "removing leftover containers: $(echo $ids)"
    docker rm -f $ids >/dev/null 2>&1 || true
  fi
  if ((started)) && [[ -n "$RUN" && -f "$RUN/dockerd.pid" ]]; then
    local pid; pid="$(cat "$RUN/dockerd.pid")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
      log "stopped dockerd (pid $pid)"
    fi
    # vfs layers are plain directories; mounts under the data root are gone with the daemon,
    # except the bind mount of the data root itself that a dockerd failing at start leaves.
    if mountpoint -q "$DATA" 2>/dev/null; then umount "$DATA" 2>/dev/null || umount -l "$DATA" 2>/dev/null || true; fi
    rm -rf "$DATA"
    # The bridge dockerd created (it leaves it behind when it exits).
    if ((!had_bridge)) && ip link show docker0 >/dev/null 2>&1; then ip link delete docker0 2>/dev/null || true; fi
  fi
  if [[ -n "$RUN" ]]; then rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0="$(now)"
if ! docker info >/dev/null 2>&1; then
  [[ "$(id -u)" == 0 ]] || die "no Docker daemon answers; start one (or run as root to let this script start one)"
  if ! command -v dockerd >/dev/null 2>&1; then
    log "apt-get install docker.io"
    apt_get update -qq >&2 || die "apt-get update failed"
    apt_get install -y -qq --no-install-recommends docker.io >&2 || die "apt-get install docker.io failed"
  fi
  ip link show docker0 >/dev/null 2>&1 || had_bridge=0
  # 0700, short: /tmp/am-XXXXXX/exec/containerd/containerd-debug.sock is 50 bytes.
  RUN="$(mktemp -d /tmp/am-XXXXXX)" || die "mktemp -d /tmp/am-XXXXXX failed"
  mkdir -p "$DATA" "$RUN/exec"
  export DOCKER_HOST="unix://$RUN/docker.sock"
  started=1
  setsid dockerd --storage-driver=vfs --data-root "$DATA" --exec-root "$RUN/exec" \
    --pidfile "$RUN/dockerd.pid" -H "$DOCKER_HOST" </dev/null >"$RUN/dockerd.log" 2>&1 &
  for _ in $(seq 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  docker info >/dev/null 2>&1 || { tail -n 20 "$RUN/dockerd.log" >&2; die "dockerd did not answer"; }
  log "dockerd (vfs) up in $(elapsed "$t0")s"
fi

t1="$(now)"
scripts/emulators.sh images
log "images ready in $(elapsed "$t1")s"

t2="$(now)"
# shellcheck disable=SC2086
AGENTMEM_EMULATORS=containers go test -count=1 ${TESTFLAGS:-} "$@"
log "go test on containers in $(elapsed "$t2")s (all: $(elapsed "$t0")s)"

# The agentmem image (Dockerfile, FROM scratch) built and smoke-tested on the same daemon.
t3="$(now)"
# shellcheck disable=SC2086
go test -count=1 ${TESTFLAGS:-} -tags image -run '^TestImage' ./cmd/agentmem/imagetest/
log "image built and smoke-tested in $(elapsed "$t3")s"
