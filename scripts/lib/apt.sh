#!/usr/bin/env bash
# apt-get, once no other apt or dpkg process holds their locks: every apt-get call of the scripts
# goes through it (test.sh and containers.sh source it and call apt_get; module testenv's installer
# runs it as $AGENTMEM_APT_GET, which emulators.sh exports, else finds it beside go.work).
#
#   scripts/lib/apt.sh ARGS...              runs apt-get ARGS... (DEBIAN_FRONTEND=noninteractive)
#   . scripts/lib/apt.sh; apt_get ARGS...   the same, from a script
#
# A lock held by another process (an unattended upgrade, a second make test) is waited for, said
# once on stderr, up to AGENTMEM_APT_LOCK_TIMEOUT seconds (default 300); then apt-get runs anyway
# (it waits for dpkg's lock that long itself, DPkg::Lock::Timeout, or says what holds it).
#
#   AGENTMEM_APT_LOCKS         the lock files, space-separated (default: dpkg's and apt's); tests
#                              point it at a file of their own
#   AGENTMEM_APT_LOCK_TIMEOUT  how many seconds to wait (default 300)
#
# A lock is found in /proc/locks by the file's device and inode, so both kinds are seen: the
# fcntl locks apt and dpkg take and the flock(1) locks of a test.

APT_LOCKS_DEFAULT="/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock"

# apt_lock_holder FILE: prints the process id of a lock held on FILE ("" when none).
apt_lock_holder() {
  local f="$1" ino maj min
  [[ -e "$f" && -r /proc/locks ]] || return 0
  read -r ino maj min < <(stat -L -c '%i %Hd %Ld' "$f" 2>/dev/null) || return 0
  awk -v id="$(printf '%02x:%02x:%s' "$maj" "$min" "$ino")" \
    '{ for (i = 2; i <= NF; i++) if ($i == id) { print $(i - 1); exit } }' /proc/locks
}

# apt_wait_locks: returns once none of the lock files is held, or after the timeout (saying so).
apt_wait_locks() {
  # The wait is counted in its own one-second sleeps, not by $SECONDS, whose whole seconds can
  # tick a moment after the start and end a 1 s bound before any wait.
  local timeout="${AGENTMEM_APT_LOCK_TIMEOUT:-300}" waited=0 said=0 f pid held
  local -a locks
  read -r -a locks <<<"${AGENTMEM_APT_LOCKS:-$APT_LOCKS_DEFAULT}"
  [[ "$timeout" =~ ^[0-9]+$ ]] || { printf '[apt] AGENTMEM_APT_LOCK_TIMEOUT=%q: want whole seconds; waiting 300\n' "$timeout" >&2; timeout=300; }
  while :; do
    held=""
    for f in "${locks[@]}"; do
      pid="$(apt_lock_holder "$f")"
      if [[ -n "$pid" ]]; then held="$f"; break; fi
    done
    [[ -z "$held" ]] && return 0
    if ((!said)); then
      printf '[apt] another apt or dpkg (process %s%s) holds %s: waiting up to %ss for it to finish\n' \
        "$pid" "$(ps -o comm= -p "$pid" 2>/dev/null | sed 's/^/, /')" "$held" "$timeout" >&2
      said=1
    fi
    if ((waited >= timeout)); then
      printf '[apt] %s is still held (process %s) after %ss: running apt-get anyway\n' "$held" "$pid" "$timeout" >&2
      return 0
    fi
    sleep 1
    waited=$((waited + 1))
  done
}

# apt_get ARGS...: apt-get ARGS..., after apt_wait_locks.
apt_get() {
  apt_wait_locks
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="${AGENTMEM_APT_LOCK_TIMEOUT:-300}" "$@"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  apt_get "$@"
fi
