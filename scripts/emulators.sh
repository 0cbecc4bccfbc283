#!/usr/bin/env bash
# Local storage-backend emulators for agentmem's tests.
#
#   scripts/emulators.sh install [postgres] [dynamodb] [firestore] [cosmos] # prerequisites only
#   scripts/emulators.sh images                                          # container images, built locally
#
# This script only installs: each test binary starts the emulators it needs
# from TestMain and stops them (module testenv: AGENTMEM_* endpoints win,
# else containers where Docker answers, else local processes).
#
# images builds agentmem-emulator/{postgres,dynamodb,firestore,cosmos}:local
# with `docker import` from the same local files the processes run (the
# PostgreSQL server, a JRE with DynamoDB Local or the Firestore emulator,
# Node with the patched Cosmos server, each with the shared libraries it
# links): no registry is needed. DOCKER_HOST selects the daemon.
#
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# AGENTMEM_EMULATORS_CACHE: a private install dir, where testenv looks too.
# AGENTMEM_EMULATOR_CACHE (v0.1.0's name) is deprecated, still read when the
# new one is unset, for one release.
CACHE="${AGENTMEM_EMULATORS_CACHE:-${AGENTMEM_EMULATOR_CACHE:-$ROOT/.cache/emulators}}"

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

log() { printf '[emulators] %s\n' "$*" >&2; }
die() { printf '[emulators] ERROR: %s\n' "$*" >&2; exit 1; }
now() { local t="${EPOCHREALTIME:-$(date +%s.%N)}"; printf '%s' "${t/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

[[ -n "${AGENTMEM_EMULATORS_CACHE:-}" || -z "${AGENTMEM_EMULATOR_CACHE:-}" ]] || log "AGENTMEM_EMULATOR_CACHE is deprecated: set AGENTMEM_EMULATORS_CACHE (the tests read that one)"

usage() {
  cat >&2 <<EOF
usage: $0 install [postgres] [dynamodb] [firestore] [cosmos]   (default: all four)
       $0 images
EOF
  exit 2
}

# ---------------------------------------------------------------- helpers

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
  *) usage ;;
esac
