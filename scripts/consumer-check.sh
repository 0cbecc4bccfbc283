#!/usr/bin/env bash
# Proves agentmem installs from outside the repository, as a new user would.
# `make test` runs it; it needs no emulator and no network for agentmem itself.
#
#   scripts/consumer-check.sh [CANDIDATE]   (default v0.99.0-candidate.<unix time>)
#
# The candidate version is new on every run: the go command caches what it
# learns about a module version for good (the module cache, and an index of
# its packages in the build cache), so a version cut again from other
# commits would be built from what an earlier run saw.
#
# In a scratch copy of the work tree (tracked and untracked files, as git
# would commit them): cuts the candidate release with scripts/release.sh;
# checks every module tidy and vetted with GOWORK=off against those tags; then,
# from outside modules (GOWORK=off, agentmem fetched from the scratch copy's
# tags with git, everything else from the module cache or proxy):
#   - go gets core, sqlite, adk, mcp, anthropic and otel, builds and runs a program per backend that
#     needs no server (memstore, filestore, sqlite: open, write, read back);
#   - go gets each cloud backend and compiles a program that opens it;
#   - go gets eino (builds and runs) and genkit (builds; its go.mod lists
#     Firestore, genai and pgx, so for it the check is that the program compiles
#     none of their packages);
#   - asserts each consumer's `go list -m all` holds no other backend's SDK
#     and no agent framework (ADK, genai) unless it asked for one;
#   - runs `go run github.com/agentmem/agentmem/examples/quickstart@CANDIDATE`;
#   - `go install`s github.com/agentmem/agentmem/cmd/agentmem@CANDIDATE into a
#     scratch GOBIN and runs `agentmem --help`, then put and cat on SQLite;
#   - checks that make release refuses a used, malformed or v2+ version and a dirty tree.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CANDIDATE="${1:-v0.99.0-candidate.$(date +%s)}"
# shellcheck source=lib/local-modules.sh
. "$ROOT/scripts/lib/local-modules.sh"

log() { printf '[consumer] %s\n' "$*" >&2; }
die() { printf '[consumer] FAIL: %s\n' "$*" >&2; exit 1; }

# One check at a time per machine: each purges agentmem's modules from the
# shared module cache, which would pull them from under another's build.
if [[ -z "${AGENTMEM_CONSUMER_LOCKED:-}" ]] && command -v flock >/dev/null; then
  export AGENTMEM_CONSUMER_LOCKED=1
  exec flock "${TMPDIR:-/tmp}/agentmem-consumer-check.lock" "$0" "$@"
fi

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/agentmem-consumer.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
REPO="$SCRATCH/repo"
mkdir -p "$REPO"
export GIT_AUTHOR_NAME=agentmem-ci GIT_AUTHOR_EMAIL=ci@agentmem.invalid
export GIT_COMMITTER_NAME=agentmem-ci GIT_COMMITTER_EMAIL=ci@agentmem.invalid
unset GEMINI_API_KEY GOOGLE_API_KEY
(cd "$ROOT" && git ls-files -co --exclude-standard -z) |
  (cd "$ROOT" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$REPO" -xf -
git -C "$REPO" init -q -b main
git -C "$REPO" add -A
git -C "$REPO" commit -q -m "candidate"

log "cutting $CANDIDATE in a scratch copy"
make -s -C "$REPO" release VERSION="$CANDIDATE" >/dev/null
mapfile -t MODULES < <(cd "$REPO" && modules)
for m in "${MODULES[@]}"; do
  [[ -n "$(git -C "$REPO" tag -l "$m/$CANDIDATE")" ]] || die "make release did not tag $m/$CANDIDATE"
done
[[ -z "$(git -C "$REPO" status --porcelain)" ]] || die "make release left the tree dirty: $(git -C "$REPO" status --short)"

# The workspace still builds the released tree (go.work's replaces moved with the version).
(cd "$REPO" && go build ./cmd/agentmem/ ./examples/... >/dev/null) ||
  die "after make release, the workspace no longer builds cmd/agentmem and examples"
grep -q "^// Only the installable" "$REPO/go.work" || die "make release dropped go.work's comments"

# refuses VERSION WANT: make release VERSION must fail, saying WANT, and change nothing.
refuses() {
  local head out; head="$(git -C "$REPO" rev-parse HEAD)"
  if out="$(make -s -C "$REPO" release VERSION="$1" 2>&1)"; then die "make release VERSION=$1 was not refused"; fi
  [[ "$out" == *"$2"* ]] || die "make release VERSION=$1 said \"$out\", want \"$2\""
  [[ "$(git -C "$REPO" rev-parse HEAD)" == "$head" ]] || die "a refused make release VERSION=$1 committed"
}
refuses "$CANDIDATE" "is already used"
refuses "1.2.3" "is malformed"
refuses "v1.2" "is malformed"
refuses "v01.2.3" "is malformed"
refuses "v2.0.0" "/v2 suffix"
refuses "" "give the version"
echo dirty >"$REPO/core/DIRTY"
refuses "v0.99.1" "dirty"
rm "$REPO/core/DIRTY"
log "make release refuses a used, malformed or major-2 version and a dirty tree"

# What no consumer gets unless it asked for it.
declare -A SDK=(
  [adk]='^google\.golang\.org/(adk|genai)[/ ]'
  [aws]='^github\.com/aws/'
  [azure]='^github\.com/Azure/'
  [gcloud]='^(cloud\.google\.com/|google\.golang\.org/api[/ ]|github\.com/googleapis/)'
  [pgx]='^github\.com/jackc/'
  [sqlite]='^github\.com/ncruces/go-sqlite3'
)

# consumer NAME ALLOWED RUN|BUILD MODULE... : a fresh outside module that
# go-gets MODULE…@CANDIDATE and builds (and runs, for RUN) $NAME.go, written
# by the caller to $SCRATCH/$NAME/main.go; ALLOWED lists the SDK keys it may
# pull, and =MODULE for one module path it may (comma-separated).
consumer() {
  local name="$1" allowed="$2" mode="$3"; shift 3
  local dir="$SCRATCH/$name" mods=() m key
  for m in "$@"; do mods+=("$AGENTMEM_REPO/$m@$CANDIDATE"); done
  (
    cd "$dir" || exit 1
    go mod init example.com/"$name" >/dev/null 2>&1
    go get "${mods[@]}" 2>"$dir/get.log" || { cat "$dir/get.log" >&2; die "$name: go get ${mods[*]}"; }
    go mod tidy 2>"$dir/tidy.log" || { cat "$dir/tidy.log" >&2; die "$name: go mod tidy"; }
    go vet . || die "$name: go vet"
    if [[ "$mode" == RUN ]]; then
      out="$(go run . 2>&1)" || { echo "$out" >&2; die "$name: go run"; }
      [[ "$out" == "ok"* ]] || die "$name: the program printed $out"
      log "$name: go get, build and run: $out"
    else
      go build -o /dev/null . || die "$name: go build"
      log "$name: go get and build"
    fi
    go list -m all >"$dir/modules.txt" || die "$name: go list -m all"
    # ALLOWED entries "=MODULE" name one module path that may appear.
    local IFS=, entry
    for entry in $allowed; do
      [[ "$entry" == =* ]] && sed -i "\#^${entry#=} #d" "$dir/modules.txt"
    done
    unset IFS
    for key in "${!SDK[@]}"; do
      [[ ",$allowed," == *",$key,"* ]] && continue
      if grep -Eq "${SDK[$key]}" "$dir/modules.txt"; then
        die "$name: go list -m all has $key modules: $(grep -E "${SDK[$key]}" "$dir/modules.txt" | head -5 | tr '\n' ' ')"
      fi
    done
    log "$name: $(($(wc -l <"$dir/modules.txt") - 1)) modules in go list -m all, $(wc -l <go.sum) go.sum lines, none of another backend or framework"
  )
}

write() { mkdir -p "$SCRATCH/$1"; cat >"$SCRATCH/$1/main.go"; }

# roundtrip: the body every embedded-store program shares.
roundtrip='
func roundtrip(ctx context.Context, s *store.Store) string {
	if _, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"}); err != nil {
		log.Fatal(err)
	}
	f, err := s.Read(ctx, "kamal/main/MEMORY.md", 100)
	if err != nil || f.Content != "- lives in Hanoi\n" {
		log.Fatalf("read back %+v, %v", f, err)
	}
	return f.Version
}'

write core <<EOF
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

func main() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "agentmem")
	defer os.RemoveAll(dir)
	fs, err := filestore.Open(ctx, dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	ms, err := memstore.Open(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ok filestore", roundtrip(ctx, fs) != "", "memstore", roundtrip(ctx, ms) != "")
}
$roundtrip
EOF

write sqlite <<EOF
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/sqlite"
)

func main() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "agentmem")
	defer os.RemoveAll(dir)
	d, err := sqlite.New(ctx, filepath.Join(dir, "memory.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	defer s.Close()
	fmt.Println("ok sqlite", roundtrip(ctx, s) != "")
}
$roundtrip
EOF

write adk <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
)

func main() {
	s, err := memstore.Open(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := memory.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	tools, err := adk.NewToolset(mem, nil).Tools(nil)
	if err != nil || len(tools) != 4 {
		log.Fatalf("tools %v, %v", tools, err)
	}
	fmt.Println("ok adk toolset with", len(tools), "tools")
}
EOF

write mcp <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/mcp"
)

func main() {
	s, err := memstore.Open(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := memory.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := mcp.NewServer(mem, &mcp.Options{Namespace: mcp.FixedUser("kamal")}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ok mcp server")
}
EOF

write anthropic <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/anthropic"
	"github.com/agentmem/agentmem/core/memstore"
)

func main() {
	s, err := memstore.Open(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := anthropic.New(s, nil); err != nil {
		log.Fatal(err)
	}
	_ = anthropic.ToolParam()
	fmt.Println("ok anthropic memory tool")
}
EOF

write otel <<'EOF'
package main

import (
	"fmt"

	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/otel"
)

func main() {
	d, tracer := otel.Instrument(memstore.New(), nil)
	_ = store.New(d, nil).Close()
	fmt.Println("ok otel", tracer != nil)
}
EOF

write eino <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/eino"
)

func main() {
	s, err := memstore.Open(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := memory.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	mw, err := eino.NewMiddleware(mem, nil)
	if err != nil || len(mw.Tools()) != 4 {
		log.Fatalf("middleware %v, %v", mw, err)
	}
	fmt.Println("ok eino middleware with", len(mw.Tools()), "tools")
}
EOF

write genkit <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"

	gk "github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/genkit"
)

func main() {
	ctx := context.Background()
	s, err := memstore.Open(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := memory.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	nb, err := genkit.Define(gk.Init(ctx), mem, nil)
	if err != nil || len(nb.Tools()) != 4 {
		log.Fatalf("notebook %v, %v", nb, err)
	}
	fmt.Println("ok genkit notebook with", len(nb.Tools()), "tools")
}
EOF

# compiles_no_sdk NAME: the program of consumer NAME compiles no package of
# any SDK in SDK (for a framework whose go.mod lists modules it never
# compiles for us, such as Genkit's Firestore and genai).
compiles_no_sdk() {
  local dir="$SCRATCH/$1" key
  (cd "$dir" && go list -deps . | sed "s/\$/ /" >"$dir/packages.txt") || die "$1: go list -deps"
  for key in "${!SDK[@]}"; do
    if grep -Eq "${SDK[$key]}" "$dir/packages.txt"; then
      die "$1: compiles $key packages: $(grep -E "${SDK[$key]}" "$dir/packages.txt" | head -5 | tr '\n' ' ')"
    fi
  done
  log "$1: $(wc -l <"$dir/packages.txt") packages compiled, none of a backend SDK, ADK or genai"
}

write dynamodb <<'EOF'
package main

import (
	"context"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

func main() {
	ctx := context.Background()
	d, err := dynamodb.New(ctx, awsdynamodb.New(awsdynamodb.Options{Region: "us-east-1"}), "agentmem", nil)
	if err == nil {
		_ = store.New(d, nil).Close()
	}
}
EOF

write firestore <<'EOF'
package main

import (
	"context"

	gfirestore "cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

func main() {
	ctx := context.Background()
	c, err := gfirestore.NewClient(ctx, "my-project")
	if err != nil {
		return
	}
	if d, err := firestore.New(ctx, c, "agentmem", nil); err == nil {
		_ = store.New(d, nil).Close()
	}
}
EOF

write cosmosdb <<'EOF'
package main

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
)

func main() {
	ctx := context.Background()
	c, err := azcosmos.NewClientFromConnectionString("AccountEndpoint=https://localhost:8081/;AccountKey=a2V5;", nil)
	if err != nil {
		return
	}
	if d, err := cosmosdb.New(ctx, c, "agentmem", "memory", nil); err == nil {
		_ = store.New(d, nil).Close()
	}
}
EOF

write postgres <<'EOF'
package main

import (
	"context"
	"os"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/postgres"
)

func main() {
	d, err := postgres.Open(context.Background(), os.Getenv("DATABASE_URL"), nil)
	if err == nil {
		_ = store.New(d, nil).Close()
	}
}
EOF

# check_all runs with errexit off (its caller tests its status), so every
# step says || return 1.
check_all() {
  local m out
  for m in "${MODULES[@]}"; do
    (
      cd "$REPO/$m" || exit 1
      out="$(go mod tidy -diff 2>&1)" || { echo "$out" >&2; die "$m at $CANDIDATE is not tidy with GOWORK=off"; }
      out="$(go vet ./... 2>&1)" || { echo "$out" >&2; die "go vet with GOWORK=off fails in $m at $CANDIDATE"; }
    ) || return 1
  done
  log "${#MODULES[@]} modules at $CANDIDATE: tidy and vetted with GOWORK=off"
  consumer core "" RUN core || return 1
  consumer sqlite sqlite RUN sqlite || return 1
  consumer adk adk,gcloud RUN adk core || return 1
  consumer eino "" RUN eino core || return 1
  consumer genkit adk,gcloud,pgx BUILD genkit core || return 1
  compiles_no_sdk genkit || return 1
  # The MCP SDK's golang.org/x/oauth2 requires GCE's metadata client (never built here).
  consumer mcp "=cloud.google.com/go/compute/metadata" RUN mcp core || return 1
  # anthropic-sdk-go's own go.mod requires the AWS and Google SDKs (its Bedrock and Vertex clients).
  consumer anthropic "aws,gcloud" RUN anthropic core || return 1
  consumer otel "" RUN otel core || return 1
  # The backends' tests start emulators with testcontainers-go (testenv), whose
  # Docker client requires a Windows terminal module from the Azure org (never built here).
  consumer postgres "pgx,=github.com/Azure/go-ansiterm" BUILD postgres || return 1
  consumer dynamodb "aws,=github.com/Azure/go-ansiterm" BUILD dynamodb || return 1
  consumer firestore "gcloud,=github.com/Azure/go-ansiterm" BUILD firestore || return 1
  consumer cosmosdb azure BUILD cosmosdb || return 1
  mkdir -p "$SCRATCH/run" && cd "$SCRATCH/run" || return 1
  out="$(go run "$AGENTMEM_REPO/examples/quickstart@$CANDIDATE" 2>&1)" ||
    { echo "$out" >&2; log "FAIL: go run $AGENTMEM_REPO/examples/quickstart@$CANDIDATE"; return 1; }
  [[ -s .agent-memory.db ]] || { log "FAIL: the quickstart left no .agent-memory.db"; return 1; }
  log "go run $AGENTMEM_REPO/examples/quickstart@$CANDIDATE: $(echo "$out" | wc -l) lines, memory stored"
  local bin="$SCRATCH/bin" db="sqlite:$SCRATCH/run/cli.db"
  GOBIN="$bin" go install "$AGENTMEM_REPO/cmd/agentmem@$CANDIDATE" ||
    die "go install $AGENTMEM_REPO/cmd/agentmem@$CANDIDATE"
  out="$("$bin/agentmem" --help)" || die "agentmem --help failed"
  [[ "$out" == *"Exit codes"* ]] || die "agentmem --help says no exit codes"
  echo "- lives in Hanoi" | "$bin/agentmem" --store "$db" put kamal/main/MEMORY.md >/dev/null ||
    die "agentmem put on $db"
  out="$("$bin/agentmem" --store "$db" cat kamal/main/MEMORY.md)" || die "agentmem cat on $db"
  [[ "$out" == "- lives in Hanoi" ]] || die "agentmem cat printed $out"
  log "go install $AGENTMEM_REPO/cmd/agentmem@$CANDIDATE: --help, put and cat on SQLite"
}
with_local_modules "$REPO" check_all
log "ok: $CANDIDATE installs from outside the repository"
