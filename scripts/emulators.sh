#!/usr/bin/env bash
# Local storage-backend emulators for agentmem's tests.
#
#   scripts/emulators.sh install [postgres] [dynamodb] [firestore] [cosmos] # prerequisites only
#   scripts/emulators.sh images                                          # container images, built locally
#   scripts/emulators.sh start [postgres] [dynamodb] [firestore] [cosmos]   # default: all four
#   scripts/emulators.sh stop                                            # stop all this script started
#
# Tests need only install (or images): each backend's TestMain starts its
# emulators from Go (module testenv) and stops them. start/stop remain for a
# shell session that wants emulators of its own.
#
# images builds agentmem-emulator/{postgres,dynamodb,firestore,cosmos}:local
# with `docker import` from the same local files the processes run (the
# PostgreSQL server, a JRE with DynamoDB Local or the Firestore emulator,
# Node with the patched Cosmos server, each with the shared libraries it
# links): no registry is needed. DOCKER_HOST selects the daemon.
#
# start installs what is missing (under .cache/emulators/), starts each requested
# emulator on a free 127.0.0.1 port (in parallel), waits until it answers and
# writes .cache/run/emulators.env (`export NAME=value` lines) to be sourced:
#   AGENTMEM_POSTGRES_URL, AGENTMEM_DYNAMODB_ENDPOINT, AGENTMEM_FIRESTORE_EMULATOR_HOST
#   (+ FIRESTORE_EMULATOR_HOST), AGENTMEM_COSMOS_ENDPOINT, AGENTMEM_COSMOS_KEY.
# A backend whose AGENTMEM_* variable is already set is not started; the given
# value is copied into the env file. Runtime state (pid files, logs, data) lives
# in .cache/run/. stop kills only the processes recorded there and is safe to
# run when nothing is running.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${AGENTMEM_EMULATOR_CACHE:-$ROOT/.cache/emulators}" # AGENTMEM_EMULATOR_CACHE: a private install dir
RUN="${AGENTMEM_RUN_DIR:-$ROOT/.cache/run}" # AGENTMEM_RUN_DIR: a private run dir for parallel users
ENV_FILE="$RUN/emulators.env"
READY_TIMEOUT="${EMULATORS_READY_TIMEOUT:-60}"

ALL_BACKENDS=(postgres dynamodb firestore cosmos)

# PostgreSQL 15 (Debian 12's); another installed major version serves too.
PG_BIN="${AGENTMEM_PG_BIN:-/usr/lib/postgresql/15/bin}"
if [[ -z "${AGENTMEM_PG_BIN:-}" && ! -x "$PG_BIN/initdb" ]]; then
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [[ -x "$d/initdb" ]]; then PG_BIN="$d"; break; fi
  done
fi
DDB_NPM="amplify-dynamodb-simulator@2.9.30"
FIRESTORE_DIR="/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator"
FIRESTORE_JAR="$FIRESTORE_DIR/cloud-firestore-emulator.jar"
FIRESTORE_CMD="$FIRESTORE_DIR/cloud_firestore_emulator"
COSMOS_SRC="$ROOT/scripts/cosmos"
# The Cosmos DB emulator's well-known (public) account key.
COSMOS_WELL_KNOWN_KEY="C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

log() { printf '[emulators] %s\n' "$*" >&2; }
die() { printf '[emulators] ERROR: %s\n' "$*" >&2; exit 1; }
now() { local t="${EPOCHREALTIME:-$(date +%s.%N)}"; printf '%s' "${t/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

usage() {
  cat >&2 <<EOF
usage: $0 install [postgres] [dynamodb] [firestore] [cosmos]   (default: all four)
       $0 images
       $0 start [postgres] [dynamodb] [firestore] [cosmos]   (default: all four)
       $0 stop
EOF
  exit 2
}

# ---------------------------------------------------------------- helpers

# free_ports N: print N distinct free TCP ports on 127.0.0.1, one per line.
free_ports() {
  local n="$1"
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$n" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
    return
  fi
  # Fallback: random ports that nothing answers on (bash /dev/tcp probe).
  local got=() p i
  while ((${#got[@]} < n)); do
    p=$((20000 + RANDOM % 12000))
    for i in "${got[@]}"; do [[ "$i" == "$p" ]] && continue 2; done
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then got+=("$p"); fi
  done
  printf '%s\n' "${got[@]}"
}

java_bin() {
  local j
  for j in /usr/lib/jvm/java-17-openjdk-*/bin/java; do [[ -x "$j" ]] && { echo "$j"; return; }; done
  command -v java || true
}
javac_bin() {
  local j
  for j in /usr/lib/jvm/java-17-openjdk-*/bin/javac; do [[ -x "$j" ]] && { echo "$j"; return; }; done
  command -v javac || true
}

# spawn NAME MARKER CMD...: run CMD in its own session/process group with output
# to $RUN/NAME.log; the child records "pgid marker" in $RUN/NAME.pid.
spawn() {
  local name="$1" marker="$2"; shift 2
  local pidfile="$RUN/$name.pid"
  rm -f "$pidfile"
  # $$ inside the child is the process after setsid (whether or not setsid had
  # to fork), i.e. the leader of the new process group; exec keeps that pid.
  # The working dir is $RUN/NAME.wd: DynamoDB Local writes a metadata file there.
  mkdir -p "$RUN/$name.wd"
  # shellcheck disable=SC2016
  (cd "$RUN/$name.wd" && exec setsid bash -c 'echo "$$ $1" > "$0"; shift; exec "$@"' "$pidfile" "$marker" "$@") \
    </dev/null >"$RUN/$name.log" 2>&1 &
  local i
  for ((i = 0; i < 250; i++)); do [[ -s "$pidfile" ]] && return 0; sleep 0.02; done
  fail_backend "$name" "could not start the process"
}

# group_alive PGID: the group has a live (non-zombie) process. Zombies count as
# gone: orphans may be reaped late by init.
group_alive() {
  kill -0 -- "-$1" 2>/dev/null || return 1
  ps -e -o pgid=,stat= 2>/dev/null | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'
}

# group_matches PGID MARKER: some process of the group has MARKER in its command line.
group_matches() {
  ps -e -o pgid=,args= 2>/dev/null | awk -v g="$1" '$1 == g' | grep -qF -- "$2"
}

fail_backend() {
  local name="$1" msg="$2"
  {
    printf '[emulators] ERROR: %s: %s\n' "$name" "$msg"
    if [[ -s "$RUN/$name.log" ]]; then
      printf '[emulators] ---- last lines of %s ----\n' "$RUN/$name.log"
      tail -n 40 "$RUN/$name.log" | sed 's/^/    /'
    else
      printf '[emulators] (its log %s is empty)\n' "$RUN/$name.log"
    fi
  } >&2
  exit 1
}

# wait_ready NAME PGID PROBE...: run PROBE until it succeeds, the group dies, or timeout.
wait_ready() {
  local name="$1" pgid="$2"; shift 2
  local deadline=$((SECONDS + READY_TIMEOUT))
  while ! "$@" >/dev/null 2>&1; do
    if [[ -n "$pgid" ]] && ! group_alive "$pgid"; then
      fail_backend "$name" "the emulator process exited before it answered"
    fi
    ((SECONDS < deadline)) || fail_backend "$name" "did not answer within ${READY_TIMEOUT}s"
    sleep 0.1
  done
}

http_code_not_000() { [[ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$1")" != "000" ]]; }
http_body_is() { [[ "$(curl -s -m 2 "$1")" == "$2" ]]; }
http_ok() { curl -s -f -m 2 -o /dev/null "$1"; }

# ---------------------------------------------------------------- prerequisites

APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install these packages by hand: $*"
  [[ "$(id -u)" == 0 ]] || die "missing packages ($*); install them as root: apt-get update && apt-get install -y $*"
  if ((APT_UPDATED == 0)); then
    log "apt-get update (something is missing)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 \
    || die "apt-get install $* failed; install them by hand (apt-get install -y $*)"
}

# ensure_prereqs BACKEND...: install (serially, via apt) what the backends need.
ensure_prereqs() {
  local want=" $* " pkgs=()
  command -v curl >/dev/null 2>&1 || pkgs+=(curl)
  if [[ "$want" == *" postgres "* ]] && [[ ! -x "$PG_BIN/initdb" || ! -x "$PG_BIN/pg_ctl" ]]; then
    pkgs+=(postgresql-15)
  fi
  if [[ "$want" == *" dynamodb "* || "$want" == *" firestore "* ]] && [[ -z "$(java_bin)" ]]; then
    pkgs+=(openjdk-17-jre-headless)
  fi
  if [[ "$want" == *" dynamodb "* ]] && [[ ! -f "$CACHE/dynamodb/launcher/DdbLoopback.class" ]] && [[ -z "$(javac_bin)" ]]; then
    pkgs+=(openjdk-17-jdk-headless)
  fi
  if [[ "$want" == *" dynamodb "* || "$want" == *" cosmos "* ]]; then
    command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
    command -v npm >/dev/null 2>&1 || pkgs+=(npm)
  fi
  ((${#pkgs[@]} == 0)) || apt_install "${pkgs[@]}"

  if [[ "$want" == *" postgres "* ]]; then
    [[ -x "$PG_BIN/initdb" && -x "$PG_BIN/pg_ctl" ]] \
      || die "postgres: $PG_BIN/initdb not found; install with: apt-get install -y postgresql-15"
  fi
  if [[ "$want" == *" dynamodb "* || "$want" == *" firestore "* ]]; then
    [[ -n "$(java_bin)" ]] || die "java not found; install with: apt-get install -y openjdk-17-jre-headless"
  fi
  if [[ "$want" == *" dynamodb "* ]] && [[ ! -f "$CACHE/dynamodb/launcher/DdbLoopback.class" ]]; then
    [[ -n "$(javac_bin)" ]] || die "dynamodb: javac not found; install with: apt-get install -y openjdk-17-jdk-headless"
  fi
  if [[ "$want" == *" firestore "* ]]; then
    [[ -f "$FIRESTORE_JAR" && -x "$FIRESTORE_CMD" ]] || die "firestore: the official Cloud Firestore emulator is missing ($FIRESTORE_JAR).
  It comes from Google's Debian package google-cloud-cli-firestore-emulator, which this network cannot
  download (its apt source is unreachable). Use a machine image that has it, or point the tests at a
  running emulator with AGENTMEM_FIRESTORE_EMULATOR_HOST=host:port."
  fi
  if [[ "$want" == *" dynamodb "* || "$want" == *" cosmos "* ]]; then
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
      die "node/npm not found; install with: apt-get install -y nodejs npm"
    fi
  fi
}

# ---------------------------------------------------------------- installs (idempotent)

npm_env() { export npm_config_cache="$CACHE/.npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false; }

install_dynamodb() {
  local dir="$CACHE/dynamodb" E="$CACHE/dynamodb/package/emulator"
  if [[ ! -f "$E/DynamoDBLocal.jar" ]]; then
    log "dynamodb: installing DynamoDB Local ($DDB_NPM) into $dir"
    npm_env
    local tmp; tmp="$(mktemp -d "$CACHE/dynamodb.tmp.XXXXXX")"
    (cd "$tmp" && npm pack --silent "$DDB_NPM" >/dev/null) || { rm -rf "$tmp"; die "dynamodb: npm pack $DDB_NPM failed"; }
    tar xzf "$tmp"/amplify-dynamodb-simulator-*.tgz -C "$tmp" package/emulator \
      || { rm -rf "$tmp"; die "dynamodb: could not unpack $DDB_NPM"; }
    rm -f "$tmp"/*.tgz
    [[ -f "$tmp/package/emulator/DynamoDBLocal.jar" ]] || { rm -rf "$tmp"; die "dynamodb: DynamoDBLocal.jar not in $DDB_NPM"; }
    rm -rf "$dir" && mkdir -p "$dir" && mv "$tmp/package" "$dir/package" && rm -rf "$tmp"
  fi
  if [[ ! -f "$dir/launcher/DdbLoopback.class" ]]; then
    log "dynamodb: compiling the loopback launcher"
    local src; src="$(mktemp -d "$CACHE/dynamodb-launcher.tmp.XXXXXX")"
    # Binds DynamoDB Local to 127.0.0.1 only (its CLI has no bind-address option).
    cat >"$src/DdbLoopback.java" <<'JAVA'
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import org.eclipse.jetty.server.*;
public class DdbLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer p = ServerRunner.createServerFromCommandLineArgs(args);
    java.lang.reflect.Field f = DynamoDBProxyServer.class.getDeclaredField("server");
    f.setAccessible(true);
    for (Connector c : ((Server) f.get(p)).getConnectors())
      if (c instanceof ServerConnector) ((ServerConnector) c).setHost("127.0.0.1");
    p.start(); p.join();
  }
}
JAVA
    "$(javac_bin)" -nowarn -d "$src/out" -cp "$E/DynamoDBLocal.jar:$E/DynamoDBLocal_lib/*" "$src/DdbLoopback.java" \
      || { rm -rf "$src"; die "dynamodb: javac of the loopback launcher failed"; }
    rm -rf "$dir/launcher" && mv "$src/out" "$dir/launcher" && rm -rf "$src"
  fi
}

install_cosmos() {
  local dir="$CACHE/cosmos"
  [[ -f "$COSMOS_SRC/package.json" && -f "$COSMOS_SRC/package-lock.json" ]] \
    || die "cosmos: $COSMOS_SRC/package.json or package-lock.json missing"
  if ! cmp -s "$COSMOS_SRC/package-lock.json" "$dir/package-lock.json" \
     || ! cmp -s "$COSMOS_SRC/package.json" "$dir/package.json" \
     || [[ ! -f "$dir/.installed" ]]; then
    log "cosmos: npm ci (@vercel/cosmosdb-server) into $dir"
    npm_env
    local tmp; tmp="$(mktemp -d "$CACHE/cosmos.tmp.XXXXXX")"
    cp "$COSMOS_SRC/package.json" "$COSMOS_SRC/package-lock.json" "$tmp/"
    (cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) \
      || { rm -rf "$tmp"; die "cosmos: npm ci failed"; }
    touch "$tmp/.installed"
    rm -rf "$dir" && mv "$tmp" "$dir"
  fi
  patch_cosmos "$dir/node_modules/@vercel/cosmosdb-server"
}

# patch_file NAME FILE UPSTREAM_FIXED_STRING PATCHED_FIXED_STRING SED_EXPR
patch_file() {
  local what="$1" f="$2" old="$3" new="$4" expr="$5"
  [[ -f "$f" ]] || die "cosmos: $f not found; cannot apply fix ($what)"
  if ! grep -qF -- "$new" "$f"; then
    [[ "$(grep -cF -- "$old" "$f")" == 1 ]] \
      || die "cosmos: $f does not look as expected (no single '$old'); cannot apply fix ($what)"
    sed -i "$expr" "$f"
  fi
  grep -qF -- "$new" "$f" || die "cosmos: fix ($what) did not apply to $f"
  ! grep -qF -- "$old" "$f" || die "cosmos: fix ($what) left the upstream text in $f"
}

patch_cosmos() {
  local L="$1/lib/handler"
  # 1) Reading a missing item of a partitioned container answered 500
  #    ("Cannot read properties of undefined (reading 'id')") instead of 404.
  patch_file "missing-item read → 404" "$L/read-document.js" \
    'if (data[path] !== clientKeys[i])' \
    'if (!data || data[path] !== clientKeys[i])' \
    's/if (data\[path\] !== clientKeys\[i\])/if (!data || data[path] !== clientKeys[i])/'
  # 2) TransactionalBatch operations carry no per-op partition key; use the request's.
  patch_file "batch partition key" "$L/batch-documents.js" \
    'const input = body[i];' \
    'const input = Object.assign({ partitionKey: req.headers["x-ms-documentdb-partitionkey"] }, body[i]);' \
    's/const input = body\[i\];/const input = Object.assign({ partitionKey: req.headers["x-ms-documentdb-partitionkey"] }, body[i]);/'
  # 3) An atomic TransactionalBatch applied its operations one by one and kept
  #    those before a failing one, answering 200 (the SDK's Success). As the
  #    service does: on any failure restore the container's items as they were
  #    before the batch, answer 207 Multi-Status, and report every operation
  #    but the failing one as 424 Failed Dependency. The handler is synchronous
  #    after the body is read, so no other request interleaves.
  patch_file "atomic batch: snapshot" "$L/batch-documents.js" \
    'let failed = false;' \
    'let failed = false, undoAtomic = isAtomic && [new Map(collection.documents._data), new Map(collection.documents._index)], finishAtomic = rs => { if (undoAtomic && rs.some(r => r.statusCode >= 400)) { [collection.documents._data, collection.documents._index] = undoAtomic; rs.forEach(r => { if (r.statusCode < 400) { r.statusCode = 424; r.requestCharge = 0; delete r.eTag; delete r.resourceBody; } }); res.statusCode = 207; } return rs; };' \
    's|let failed = false;|let failed = false, undoAtomic = isAtomic \&\& [new Map(collection.documents._data), new Map(collection.documents._index)], finishAtomic = rs => { if (undoAtomic \&\& rs.some(r => r.statusCode >= 400)) { [collection.documents._data, collection.documents._index] = undoAtomic; rs.forEach(r => { if (r.statusCode < 400) { r.statusCode = 424; r.requestCharge = 0; delete r.eTag; delete r.resourceBody; } }); res.statusCode = 207; } return rs; };|'
  patch_file "atomic batch: roll back" "$L/batch-documents.js" \
    'return responseBody;' \
    'return finishAtomic(responseBody);' \
    's|return responseBody;|return finishAtomic(responseBody);|'
}

# ---------------------------------------------------------------- starters
# Each runs in a background subshell, writes $RUN/NAME.envpart on success.

start_postgres() {
  local port="$1" t0; t0="$(now)"
  local pgdir="$RUN/postgres"
  local asuser=()
  if [[ "$(id -u)" == 0 ]]; then
    id postgres >/dev/null 2>&1 || fail_backend postgres "user 'postgres' missing (initdb refuses to run as root); install with: apt-get install -y postgresql-15"
    asuser=(runuser -u postgres --)
  fi
  # The data dir must be reachable by the postgres user and the socket path short.
  rm -rf "$pgdir"; mkdir -p "$pgdir"
  if ((${#asuser[@]})); then chown postgres: "$pgdir"; fi
  if ((${#pgdir} > 80)) || { ((${#asuser[@]})) && ! "${asuser[@]}" test -w "$pgdir"; }; then
    rm -rf "$pgdir"
    pgdir="$(mktemp -d /tmp/agentmem-pg.XXXXXX)"
    if ((${#asuser[@]})); then chown postgres: "$pgdir"; fi
  fi
  echo "$pgdir" >"$RUN/postgres.dir"
  # Output goes to a file opened by this shell, so the log works even where the
  # postgres user cannot reach $RUN; cd / for the same reason.
  (cd / && "${asuser[@]}" "$PG_BIN/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 --no-sync --no-instructions) \
    >"$RUN/postgres.log" 2>&1 || fail_backend postgres "initdb failed"
  (cd / && "${asuser[@]}" "$PG_BIN/pg_ctl" -D "$pgdir/data" -w -t "$READY_TIMEOUT" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $pgdir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start) >>"$RUN/postgres.log" 2>&1 || fail_backend postgres "pg_ctl start failed"
  wait_ready postgres "" "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres
  echo "export AGENTMEM_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable" >"$RUN/postgres.envpart"
  log "postgres ready on 127.0.0.1:$port in $(elapsed "$t0")s"
}

start_dynamodb() {
  local port="$1" t0; t0="$(now)"
  install_dynamodb
  local t1; t1="$(now)"
  local E="$CACHE/dynamodb/package/emulator"
  spawn dynamodb DdbLoopback env DDB_LOCAL_TELEMETRY=0 "$(java_bin)" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Djava.library.path="$E/DynamoDBLocal_lib" \
    -cp "$CACHE/dynamodb/launcher:$E/DynamoDBLocal.jar:$E/DynamoDBLocal_lib/*" \
    DdbLoopback -inMemory -port "$port" -disableTelemetry
  local pgid; read -r pgid _ <"$RUN/dynamodb.pid"
  # It answers 400 to a bare GET when ready.
  wait_ready dynamodb "$pgid" http_code_not_000 "http://127.0.0.1:$port/"
  echo "export AGENTMEM_DYNAMODB_ENDPOINT=http://127.0.0.1:$port" >"$RUN/dynamodb.envpart"
  log "dynamodb ready on 127.0.0.1:$port in $(elapsed "$t1")s (total with install $(elapsed "$t0")s)"
}

start_firestore() {
  local port="$1" t0; t0="$(now)"
  # The wrapper script runs java as a child: the whole process group is stopped.
  JAVA="$(java_bin)"; export JAVA
  spawn firestore CloudFirestore "$FIRESTORE_CMD" start --host=127.0.0.1 --port="$port"
  local pgid; read -r pgid _ <"$RUN/firestore.pid"
  wait_ready firestore "$pgid" http_body_is "http://127.0.0.1:$port/" Ok
  {
    echo "export AGENTMEM_FIRESTORE_EMULATOR_HOST=127.0.0.1:$port"
    echo "export FIRESTORE_EMULATOR_HOST=127.0.0.1:$port"
  } >"$RUN/firestore.envpart"
  log "firestore ready on 127.0.0.1:$port in $(elapsed "$t0")s"
}

start_cosmos() {
  local port="$1" t0; t0="$(now)"
  install_cosmos
  local t1; t1="$(now)"
  spawn cosmos cosmosdb-server node "$CACHE/cosmos/node_modules/@vercel/cosmosdb-server/lib/cli.js" \
    --host 127.0.0.1 -p "$port" --no-ssl
  local pgid; read -r pgid _ <"$RUN/cosmos.pid"
  wait_ready cosmos "$pgid" http_ok "http://127.0.0.1:$port/"
  {
    echo "export AGENTMEM_COSMOS_ENDPOINT=http://127.0.0.1:$port"
    echo "export AGENTMEM_COSMOS_KEY=$COSMOS_WELL_KNOWN_KEY"
  } >"$RUN/cosmos.envpart"
  log "cosmos ready on 127.0.0.1:$port in $(elapsed "$t1")s (total with install $(elapsed "$t0")s)"
}

# ---------------------------------------------------------------- stop

stop_postgres() {
  [[ -f "$RUN/postgres.dir" ]] || return 0
  local pgdir; pgdir="$(cat "$RUN/postgres.dir")"
  if [[ -f "$pgdir/data/postmaster.pid" ]]; then
    local asuser=()
    if [[ "$(id -u)" == 0 ]]; then asuser=(runuser -u postgres --); fi
    local pid; pid="$(head -n 1 "$pgdir/data/postmaster.pid")"
    (cd / && "${asuser[@]}" "$PG_BIN/pg_ctl" -D "$pgdir/data" -m fast -w -t 20 stop) >/dev/null 2>&1 \
      || (cd / && "${asuser[@]}" "$PG_BIN/pg_ctl" -D "$pgdir/data" -m immediate -w -t 10 stop) >/dev/null 2>&1 || true
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && ps -o args= -p "$pid" | grep -q postgres; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "stopped postgres"
  fi
  case "$pgdir" in
    "$RUN/postgres" | /tmp/agentmem-pg.*) rm -rf "$pgdir" ;;
  esac
  rm -f "$RUN/postgres.dir"
}

stop_group() {
  local name="$1" f="$RUN/$1.pid"
  [[ -f "$f" ]] || return 0
  local pgid marker
  read -r pgid marker <"$f" || true
  if [[ "$pgid" =~ ^[0-9]+$ ]] && ((pgid > 1)) && group_alive "$pgid" && group_matches "$pgid" "$marker"; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do group_alive "$pgid" || break; sleep 0.1; done
    if group_alive "$pgid"; then
      kill -KILL -- "-$pgid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do group_alive "$pgid" || break; sleep 0.1; done
    fi
    log "stopped $name (process group $pgid)"
  fi
  rm -f "$f"
}

stop_backend() {
  case "$1" in
    postgres) stop_postgres ;;
    *) stop_group "$1" ;;
  esac
  rm -f "$RUN/$1.envpart"
}

cmd_stop() {
  [[ -d "$RUN" ]] || return 0
  local b
  for b in "${ALL_BACKENDS[@]}"; do stop_backend "$b"; done
  rm -f "$ENV_FILE"
}

# ---------------------------------------------------------------- start

# env_line NAME VALUE: an `export NAME=value` line; the value is quoted only if it
# has characters a shell would treat specially.
env_line() {
  if [[ "$2" =~ ^[A-Za-z0-9_@%+=:,./?~-]*$ ]]; then
    printf 'export %s=%s' "$1" "$2"
  else
    printf 'export %s=%q' "$1" "$2"
  fi
}

env_var_of() {
  case "$1" in
    postgres) echo AGENTMEM_POSTGRES_URL ;;
    dynamodb) echo AGENTMEM_DYNAMODB_ENDPOINT ;;
    firestore) echo AGENTMEM_FIRESTORE_EMULATOR_HOST ;;
    cosmos) echo AGENTMEM_COSMOS_ENDPOINT ;;
  esac
}

cmd_start() {
  local requested=() b
  if (($# == 0)); then requested=("${ALL_BACKENDS[@]}"); fi
  for b in "$@"; do
    case "$b" in
      postgres | dynamodb | firestore | cosmos)
        [[ " ${requested[*]-} " == *" $b "* ]] || requested+=("$b") ;;
      *) log "unknown backend '$b'"; usage ;;
    esac
  done

  mkdir -p "$CACHE" "$RUN"
  local T0; T0="$(now)"

  # Backends given from outside are not started; their value goes to the env file.
  local to_start=() lines=() var
  for b in "${requested[@]}"; do
    var="$(env_var_of "$b")"
    if [[ -n "${!var:-}" ]]; then
      log "$b: $var is set; not starting it"
      lines+=("$(env_line "$var" "${!var}")")
      case "$b" in
        firestore) lines+=("$(env_line FIRESTORE_EMULATOR_HOST "${!var}")") ;;
        cosmos) lines+=("$(env_line AGENTMEM_COSMOS_KEY "${AGENTMEM_COSMOS_KEY:-$COSMOS_WELL_KNOWN_KEY}")") ;;
      esac
    else
      to_start+=("$b")
    fi
  done

  rm -f "$ENV_FILE"
  if ((${#to_start[@]})); then
    # Leftovers of an earlier run of this checkout are stopped first.
    for b in "${to_start[@]}"; do stop_backend "$b"; rm -f "$RUN/$b.rc"; done

    ensure_prereqs "${to_start[@]}"

    local ports=()
    mapfile -t ports < <(free_ports "${#to_start[@]}")
    ((${#ports[@]} == ${#to_start[@]})) || die "could not pick free ports"

    rm -rf "$CACHE"/*.tmp.*  # half-done installs of an interrupted run

    # On interruption, stop the starters, then what they started.
    local i pids=()
    trap 'trap - INT TERM; log "interrupted; stopping"; kill "${pids[@]}" 2>/dev/null; wait; for b in "${to_start[@]}"; do stop_backend "$b"; done; exit 130' INT TERM

    for i in "${!to_start[@]}"; do
      b="${to_start[$i]}"
      ( "start_$b" "${ports[$i]}"; ) &
      pids+=($!)
    done
    local failed=()
    for i in "${!to_start[@]}"; do
      wait "${pids[$i]}" || failed+=("${to_start[$i]}")
    done
    trap - INT TERM

    if ((${#failed[@]})); then
      for b in "${to_start[@]}"; do stop_backend "$b"; done
      die "failed to start: ${failed[*]} (everything started by this run was stopped again)"
    fi
    for b in "${to_start[@]}"; do
      mapfile -t -O "${#lines[@]}" lines <"$RUN/$b.envpart"
    done
  fi

  printf '%s\n' "${lines[@]}" >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  log "all up in $(elapsed "$T0")s; env: $ENV_FILE"
}

# ---------------------------------------------------------------- install, images

backends_of() {
  local b out=()
  (($# == 0)) && set -- "${ALL_BACKENDS[@]}"
  for b in "$@"; do
    case "$b" in
      postgres | dynamodb | firestore | cosmos) out+=("$b") ;;
      *) log "unknown backend '$b'"; usage ;;
    esac
  done
  printf '%s\n' "${out[@]}"
}

cmd_install() {
  local want; mapfile -t want < <(backends_of "$@")
  mkdir -p "$CACHE"
  rm -rf "$CACHE"/*.tmp.*
  ensure_prereqs "${want[@]}"
  [[ " ${want[*]} " != *" dynamodb "* ]] || install_dynamodb
  [[ " ${want[*]} " != *" cosmos "* ]] || install_cosmos
  log "installed: ${want[*]}"
}

# stage_files ROOT PATH...: copies PATHs (symlinks followed) into ROOT at the
# same place, with the shared libraries every ELF file among them needs.
stage_files() {
  local root="$1" p f lib; shift
  for p in "$@"; do
    mkdir -p "$root$(dirname "$p")"
    # A dangling symlink inside (the JDK's src.zip) is left out.
    cp -rL "$p" "$root$(dirname "$p")/" 2>/dev/null || [[ -e "$root$p" ]] || die "images: could not copy $p"
  done
  while IFS= read -r lib; do
    [[ -e "$root$lib" ]] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done < <(for p in "$@"; do
      find -L "$p" -type f \( -perm -u+x -o -name '*.so*' \) ! -name 'llvmjit*' 2>/dev/null | while IFS= read -r f; do
        [[ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" == '177ELF' ]] || continue
        ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'
      done
    done | sort -u)
  # The dynamic loader by its canonical path.
  [[ -e "$root/lib64/ld-linux-x86-64.so.2" || ! -e /lib64/ld-linux-x86-64.so.2 ]] ||
    { mkdir -p "$root/lib64" && cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"; }
}

# base_root ROOT: /bin/sh, /tmp, /etc/passwd (root, postgres) for an image.
base_root() {
  local root="$1"
  stage_files "$root" /bin/sh
  mkdir -p "$root/tmp" "$root/etc" "$root/dev" "$root/proc" "$root/sys"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:postgres:/var/lib/postgresql:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\npostgres:x:999:\n' >"$root/etc/group"
}

# import_image ROOT NAME CHANGE...: docker import ROOT as NAME.
import_image() {
  local root="$1" name="$2"; shift 2
  local changes=() c
  for c in "$@"; do changes+=(--change "$c"); done
  tar -C "$root" --owner=0 --group=0 --numeric-owner -c . | docker import "${changes[@]}" - "$name" >/dev/null \
    || die "images: docker import of $name failed"
  log "images: $name ($(du -sh "$root" | cut -f1))"
}

cmd_images() {
  command -v docker >/dev/null 2>&1 || die "images: docker not found (apt-get install docker.io)"
  docker info >/dev/null 2>&1 || die "images: no Docker daemon answers (start dockerd, or set DOCKER_HOST)"
  cmd_install
  local n missing=0
  for n in postgres dynamodb firestore cosmos; do
    docker image inspect "agentmem-emulator/$n:local" >/dev/null 2>&1 || missing=1
  done
  if ((missing == 0)) && [[ -z "${AGENTMEM_IMAGES_REBUILD:-}" ]]; then
    log "images: all four present (AGENTMEM_IMAGES_REBUILD=1 builds them again)"
    return 0
  fi
  local java_home; java_home="$(dirname "$(dirname "$(readlink -f "$(java_bin)")")")"
  local tmp; tmp="$(mktemp -d "${TMPDIR:-/tmp}/agentmem-images.XXXXXX")"
  # shellcheck disable=SC2064 # expand now: tmp is local, the trap runs at exit
  trap "rm -rf $(printf '%q' "$tmp")" EXIT # also when die exits
  local t0; t0="$(now)"

  # PostgreSQL: initdb on first start (POSTGRES_USER/PASSWORD/DB as the
  # official image takes them; trust auth), then the command.
  local r="$tmp/postgres" pgroot; pgroot="$(dirname "$PG_BIN")"
  base_root "$r"
  stage_files "$r" "$PG_BIN" "$pgroot/lib" /usr/share/postgresql/"$(basename "$pgroot")" /usr/share/zoneinfo/UTC /usr/share/zoneinfo/Etc
  rm -rf "$r$pgroot"/lib/llvmjit* "$r$pgroot"/lib/bitcode
  # Writable by the image's postgres user (999) without chown, so that no root is needed.
  mkdir -p "$r/var/lib/postgresql" "$r/var/run/postgresql"
  chmod 1777 "$r/var/lib/postgresql" "$r/var/run/postgresql"
  cat >"$r/entrypoint.sh" <<'SH'
#!/bin/sh
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\n' "${POSTGRES_PASSWORD:-postgres}" >/tmp/pwfile
  initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile=/tmp/pwfile --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
  echo "host all all all trust" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
fi
exec "$@"
SH
  chmod 755 "$r/entrypoint.sh"
  import_image "$r" "agentmem-emulator/postgres:local" \
    "ENV PATH=$PG_BIN:/usr/bin:/bin" "ENV PGDATA=/var/lib/postgresql/data" "ENV TZ=UTC" \
    "USER postgres" 'ENTRYPOINT ["/entrypoint.sh"]' 'CMD ["postgres"]' "EXPOSE 5432"

  # DynamoDB Local: the official image's layout (java, /home/dynamodblocal).
  r="$tmp/dynamodb"
  base_root "$r"
  stage_files "$r" "$java_home"
  rm -rf "$r$java_home"/{jmods,include,man,demo,lib/src.zip}
  mkdir -p "$r/home/dynamodblocal"
  cp -r "$CACHE/dynamodb/package/emulator/DynamoDBLocal.jar" "$CACHE/dynamodb/package/emulator/DynamoDBLocal_lib" "$r/home/dynamodblocal/"
  stage_files "$r" "$CACHE/dynamodb/package/emulator/DynamoDBLocal_lib/libsqlite4java-linux-amd64.so"
  rm -rf "$r$CACHE"
  import_image "$r" "agentmem-emulator/dynamodb:local" \
    "ENV PATH=$java_home/bin:/usr/bin:/bin" "WORKDIR /home/dynamodblocal" 'ENTRYPOINT ["java"]' \
    'CMD ["-jar", "DynamoDBLocal.jar", "-inMemory", "-port", "8000"]' "EXPOSE 8000"

  # The official Firestore emulator jar on the same JRE.
  r="$tmp/firestore"
  base_root "$r"
  stage_files "$r" "$java_home" "$FIRESTORE_JAR"
  rm -rf "$r$java_home"/{jmods,include,man,demo,lib/src.zip}
  import_image "$r" "agentmem-emulator/firestore:local" \
    "ENV PATH=$java_home/bin:/usr/bin:/bin" \
    "ENTRYPOINT [\"java\", \"-Duser.language=en\", \"-cp\", \"$FIRESTORE_JAR\", \"com.google.cloud.datastore.emulator.firestore.CloudFirestore\"]" \
    'CMD ["start", "--host=0.0.0.0", "--port=8080"]' "EXPOSE 8080"

  # The patched Cosmos DB server on Node.
  r="$tmp/cosmos"
  base_root "$r"
  stage_files "$r" "$(readlink -f "$(command -v node)")"
  mkdir -p "$r/opt"
  cp -r "$CACHE/cosmos" "$r/opt/cosmos"
  local node; node="$(readlink -f "$(command -v node)")"
  import_image "$r" "agentmem-emulator/cosmos:local" \
    "ENV PATH=$(dirname "$node"):/usr/bin:/bin" \
    "ENTRYPOINT [\"$node\", \"/opt/cosmos/node_modules/@vercel/cosmosdb-server/lib/cli.js\"]" \
    'CMD ["--host", "0.0.0.0", "-p", "3000", "--no-ssl"]' "EXPOSE 3000"
  log "images: built in $(elapsed "$t0")s"
}

case "${1:-}" in
  install) shift; cmd_install "$@" ;;
  images) shift; (($# == 0)) || usage; cmd_images ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; (($# == 0)) || usage; cmd_stop ;;
  *) usage ;;
esac
