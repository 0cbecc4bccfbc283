#!/usr/bin/env bash
# Builds the container images testenv runs (scripts/emulators.sh images calls it, after
# installing): agentmem-emulator/{postgres,dynamodb,firestore,cosmos}:local, with docker import,
# from the files the process path runs. Where they are comes from testenv (emulators paths):
# CACHE, PG_BIN, JAVA, NODE, DDB_DIR, FIRESTORE_JAR, FIRESTORE_CLASS, COSMOS_DIR, COSMOS_CLI.
set -euo pipefail
log() { printf '[emulators] %s\n' "$*" >&2; }
die() { printf '[emulators] ERROR: %s\n' "$*" >&2; exit 1; }
now() { local t="${EPOCHREALTIME:-$(date +%s.%N)}"; printf '%s' "${t/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
command -v docker >/dev/null 2>&1 || die "images: docker not found (apt-get install docker.io)"
docker info >/dev/null 2>&1 || die "images: no Docker daemon answers (start dockerd, or set DOCKER_HOST)"
while IFS='=' read -r k v; do printf -v "$k" '%s' "$v"; done < <(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && go run ./testenv/cmd/emulators paths)
[[ -n "$PG_BIN" && -n "$JAVA" && -n "$NODE" ]] || die "images: PostgreSQL, java or node missing (scripts/emulators.sh install)"

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

build_images() {
  local n missing=0
  for n in postgres dynamodb firestore cosmos; do
    docker image inspect "agentmem-emulator/$n:local" >/dev/null 2>&1 || missing=1
  done
  if ((missing == 0)) && [[ -z "${AGENTMEM_IMAGES_REBUILD:-}" ]]; then
    log "images: all four present (AGENTMEM_IMAGES_REBUILD=1 builds them again)"
    return 0
  fi
  local java_home; java_home="$(dirname "$(dirname "$(readlink -f "$JAVA")")")"
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
  cp -r "$DDB_DIR/DynamoDBLocal.jar" "$DDB_DIR/DynamoDBLocal_lib" "$r/home/dynamodblocal/"
  stage_files "$r" "$DDB_DIR/DynamoDBLocal_lib/libsqlite4java-linux-amd64.so"
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
    "ENTRYPOINT [\"java\", \"-Duser.language=en\", \"-cp\", \"$FIRESTORE_JAR\", \"$FIRESTORE_CLASS\"]" \
    'CMD ["start", "--host=0.0.0.0", "--port=8080"]' "EXPOSE 8080"

  # The patched Cosmos DB server on Node.
  r="$tmp/cosmos"
  base_root "$r"
  stage_files "$r" "$(readlink -f "$NODE")"
  mkdir -p "$r/opt"
  cp -r "$COSMOS_DIR" "$r/opt/cosmos"
  local node; node="$(readlink -f "$NODE")"
  import_image "$r" "agentmem-emulator/cosmos:local" \
    "ENV PATH=$(dirname "$node"):/usr/bin:/bin" \
    "ENTRYPOINT [\"$node\", \"/opt/cosmos/$COSMOS_CLI\"]" \
    'CMD ["--host", "0.0.0.0", "-p", "3000", "--no-ssl"]' "EXPOSE 3000"
  log "images: built in $(elapsed "$t0")s"
}
build_images
