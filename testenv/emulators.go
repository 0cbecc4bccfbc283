package testenv

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/contract/emulator"
)

// This file is the one place that knows what each emulator needs: its
// endpoint variables, the Debian packages and files of its process path,
// and how `scripts/emulators.sh install` (go run ./testenv/cmd/emulators install) installs them.

// A spec is what testenv knows of one emulator.
type spec struct {
	// vars are the endpoint variables; the first decides whether the
	// environment gives the emulator.
	vars []string
	// apt lists the Debian packages missing for the process path.
	apt func(cache string) []string
	// install puts the emulator's files under cache (idempotent).
	install func(ctx context.Context, cache string, log io.Writer) error
	// check returns ErrNotInstalled, saying what is missing, unless the
	// process path can start the emulator.
	check func(cache string) error
}

var specs = map[Emulator]spec{
	Postgres: {
		vars: []string{emulator.PostgresURL},
		apt: func(string) []string {
			if _, err := pgBin(); err != nil {
				return []string{"postgresql-15"}
			}
			return nil
		},
		check: func(string) error { _, err := pgBin(); return err },
	},
	DynamoDB: {
		vars: []string{emulator.DynamoDBEndpoint},
		apt: func(cache string) []string {
			pkgs := append(javaPackages(), nodePackages()...)
			if !exists(filepath.Join(cache, ddbLauncher, "DdbLoopback.class")) && javacBin() == "" {
				pkgs = append(pkgs, "openjdk-17-jdk-headless")
			}
			return pkgs
		},
		install: installDynamoDB,
		check: func(cache string) error {
			if _, err := javaBin(); err != nil {
				return err
			}
			return needFiles(filepath.Join(cache, ddbDir, "DynamoDBLocal.jar"), filepath.Join(cache, ddbLauncher, "DdbLoopback.class"))
		},
	},
	Firestore: {
		vars: []string{emulator.FirestoreHost, "FIRESTORE_EMULATOR_HOST"},
		apt:  func(string) []string { return javaPackages() },
		check: func(string) error {
			if _, err := javaBin(); err != nil {
				return err
			}
			if err := needFiles(firestoreJar); err != nil {
				return fmt.Errorf("%w (it comes from Google's Debian package google-cloud-cli-firestore-emulator, whose apt source this network may not reach; use a machine image that has it, or set AGENTMEM_FIRESTORE_EMULATOR_HOST)", err)
			}
			return nil
		},
	},
	Cosmos: {
		vars:    []string{emulator.CosmosEndpoint, emulator.CosmosKey},
		apt:     func(string) []string { return append(nodePackages(), aptIfMissing("patch", "patch")...) },
		install: installCosmos,
		check:   checkCosmos,
	},
}

// Artifacts of the process path.
const (
	firestoreJar   = "/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar"
	firestoreClass = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"
	ddbNPM         = "amplify-dynamodb-simulator@2.9.30" // ships DynamoDB Local
	ddbDir         = "dynamodb/package/emulator"
	ddbLauncher    = "dynamodb/launcher"
	cosmosDir      = "cosmos"
	cosmosPackage  = "cosmos/node_modules/@vercel/cosmosdb-server"
	cosmosCLI      = cosmosPackage + "/lib/cli.js"
	cosmosVersion  = "1.0.1" // of @vercel/cosmosdb-server, as cosmos/package.json pins it
)

var (
	//go:embed cosmos/package.json
	cosmosPackageJSON []byte
	//go:embed cosmos/package-lock.json
	cosmosPackageLock []byte
	//go:embed cosmos/cosmosdb-server.patch
	cosmosPatch []byte
	//go:embed dynamodb/DdbLoopback.java
	ddbLoopbackJava []byte
)

// Needs returns the emulators the tests of the module in dir ask for: the
// Emulator constants its _test.go files name (testenv.Main(m,
// testenv.Postgres) and the like), in [All]'s order. A module without tests
// needs none.
func Needs(dir string) ([]Emulator, error) {
	seen := map[Emulator]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/agentmem/agentmem/testenv" {
				name = "testenv"
				if im.Name != nil {
					name = im.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
					if e, ok := emulatorNamed(sel.Sel.Name); ok {
						seen[e] = true
					}
				}
			}
			return true
		})
		return nil
	})
	var out []Emulator
	for _, e := range All {
		if seen[e] {
			out = append(out, e)
		}
	}
	return out, err
}

// emulatorNamed maps a constant's name (Postgres, DynamoDB…) to its
// Emulator: the value is the name in lower case.
func emulatorNamed(ident string) (Emulator, bool) {
	e := Emulator(strings.ToLower(ident))
	return e, slices.Contains(All, e)
}

// ParseEmulators returns the emulators named (all of them for none), or an
// error naming an unknown one.
func ParseEmulators(names ...string) ([]Emulator, error) {
	if len(names) == 0 {
		return All, nil
	}
	var out []Emulator
	for _, n := range names {
		e := Emulator(n)
		if _, ok := specs[e]; !ok {
			return nil, fmt.Errorf("testenv: use one of %v: unknown emulator %q", All, n)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Install installs what the process path of each emulator needs: Debian
// packages with apt-get (as root; otherwise it says which to install),
// through the repository's scripts/lib/apt.sh, which waits for another
// apt or dpkg to let go of the lock (see [AptGetEnv]), then
// the files under the cache directory (see [CacheEnv]). It is idempotent and
// ends by checking that each emulator can start, as testenv does before
// starting one.
func Install(ctx context.Context, log io.Writer, es ...Emulator) error {
	cache, err := cacheDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	if tmps, _ := filepath.Glob(filepath.Join(cache, "*.tmp.*")); len(tmps) > 0 {
		for _, t := range tmps {
			_ = os.RemoveAll(t)
		}
	}
	var pkgs []string
	for _, e := range es {
		for _, p := range specs[e].apt(cache) {
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	if len(pkgs) > 0 {
		if err := aptInstall(ctx, log, pkgs); err != nil {
			return err
		}
	}
	for _, e := range es {
		if s := specs[e]; s.install != nil {
			if err := s.install(ctx, cache, log); err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
		}
	}
	var errs []error
	for _, e := range es {
		if err := specs[e].check(cache); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fmt.Fprintf(log, "[emulators] installed: %v\n", es)
	return nil
}

// Paths returns where the process path finds each emulator's files, as
// NAME=value pairs for scripts/emulators.sh images (missing ones empty).
func Paths() ([]string, error) {
	cache, err := cacheDir()
	if err != nil {
		return nil, err
	}
	pg, _ := pgBin()
	java, _ := javaBin()
	node, _ := exec.LookPath("node")
	return []string{
		"CACHE=" + cache, "PG_BIN=" + pg, "JAVA=" + java, "NODE=" + node,
		"DDB_DIR=" + filepath.Join(cache, ddbDir), "FIRESTORE_JAR=" + firestoreJar,
		"FIRESTORE_CLASS=" + firestoreClass, "COSMOS_DIR=" + filepath.Join(cache, cosmosDir),
		"COSMOS_CLI=" + filepath.Join("node_modules/@vercel/cosmosdb-server/lib/cli.js"),
	}, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func aptIfMissing(cmd, pkg string) []string {
	if _, err := exec.LookPath(cmd); err != nil {
		return []string{pkg}
	}
	return nil
}

func javaPackages() []string {
	if _, err := javaBin(); err != nil {
		return []string{"openjdk-17-jre-headless"}
	}
	return nil
}

func nodePackages() []string {
	return append(aptIfMissing("node", "nodejs"), aptIfMissing("npm", "npm")...)
}

// javacBin finds Java 17's compiler, else any javac on PATH ("" if none).
func javacBin() string {
	if m, _ := filepath.Glob("/usr/lib/jvm/java-17-openjdk-*/bin/javac"); len(m) > 0 {
		return m[0]
	}
	j, _ := exec.LookPath("javac")
	return j
}

// AptGetEnv names the variable that, when set, is the program [Install]
// runs in place of apt-get, with apt-get's arguments: scripts/emulators.sh
// sets it to scripts/lib/apt.sh, which waits for another apt or dpkg
// process to let go of the lock first.
const AptGetEnv = "AGENTMEM_APT_GET"

// aptGetCommand is what [Install] runs for apt-get: $AGENTMEM_APT_GET,
// else the repository's scripts/lib/apt.sh when there is one above the
// working directory, else apt-get itself.
func aptGetCommand() string {
	if c := os.Getenv(AptGetEnv); c != "" {
		return c
	}
	if root, err := workRoot(); err == nil {
		if p := filepath.Join(root, "scripts", "lib", "apt.sh"); exists(p) {
			return p
		}
	}
	return "apt-get"
}

func aptInstall(ctx context.Context, log io.Writer, pkgs []string) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("%w: install these packages by hand: %s", ErrNotInstalled, strings.Join(pkgs, " "))
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: install as root: apt-get update && apt-get install -y %s", ErrNotInstalled, strings.Join(pkgs, " "))
	}
	fmt.Fprintf(log, "[emulators] apt-get install %s\n", strings.Join(pkgs, " "))
	aptGet := aptGetCommand()
	for _, args := range [][]string{{"update", "-qq"}, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)} {
		if err := run(ctx, "", append(os.Environ(), "DEBIAN_FRONTEND=noninteractive"), log, aptGet, args...); err != nil {
			return fmt.Errorf("apt-get %s: %w (install by hand: apt-get install -y %s)", args[0], err, strings.Join(pkgs, " "))
		}
	}
	return nil
}

// run runs name in dir, its output to log.
func run(ctx context.Context, dir string, env []string, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, log, log
	return cmd.Run()
}

// npmEnv keeps npm's cache under the emulators' cache and quiet.
func npmEnv(cache string) []string {
	return append(os.Environ(), "npm_config_cache="+filepath.Join(cache, ".npm-cache"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
}

func installDynamoDB(ctx context.Context, cache string, log io.Writer) error {
	dir := filepath.Join(cache, "dynamodb")
	jar := filepath.Join(cache, ddbDir, "DynamoDBLocal.jar")
	if !exists(jar) {
		fmt.Fprintf(log, "[emulators] dynamodb: installing DynamoDB Local (%s) into %s\n", ddbNPM, dir)
		tmp, err := os.MkdirTemp(cache, "dynamodb.tmp.")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := run(ctx, tmp, npmEnv(cache), log, "npm", "pack", "--silent", ddbNPM); err != nil {
			return fmt.Errorf("npm pack %s: %w", ddbNPM, err)
		}
		tgz, _ := filepath.Glob(filepath.Join(tmp, "amplify-dynamodb-simulator-*.tgz"))
		if len(tgz) != 1 {
			return fmt.Errorf("npm pack %s left no tarball", ddbNPM)
		}
		if err := run(ctx, tmp, nil, log, "tar", "xzf", tgz[0], "package/emulator"); err != nil {
			return fmt.Errorf("unpack %s: %w", ddbNPM, err)
		}
		if !exists(filepath.Join(tmp, "package/emulator/DynamoDBLocal.jar")) {
			return fmt.Errorf("DynamoDBLocal.jar not in %s", ddbNPM)
		}
		if err := replaceDir(filepath.Join(tmp, "package"), filepath.Join(dir, "package")); err != nil {
			return err
		}
	}
	if exists(filepath.Join(cache, ddbLauncher, "DdbLoopback.class")) {
		return nil
	}
	fmt.Fprintln(log, "[emulators] dynamodb: compiling the loopback launcher")
	src, err := os.MkdirTemp(cache, "dynamodb-launcher.tmp.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "DdbLoopback.java"), ddbLoopbackJava, 0o644); err != nil {
		return err
	}
	javac := javacBin()
	if javac == "" {
		return fmt.Errorf("%w: javac (apt-get install openjdk-17-jdk-headless)", ErrNotInstalled)
	}
	e := filepath.Join(cache, ddbDir)
	if err := run(ctx, src, nil, log, javac, "-nowarn", "-d", "out", "-cp", e+"/DynamoDBLocal.jar:"+e+"/DynamoDBLocal_lib/*", "DdbLoopback.java"); err != nil {
		return fmt.Errorf("javac of the loopback launcher: %w", err)
	}
	return replaceDir(filepath.Join(src, "out"), filepath.Join(cache, ddbLauncher))
}

// replaceDir moves from to to, replacing what was there.
func replaceDir(from, to string) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// installCosmos runs npm ci of cosmos/package-lock.json into cache/cosmos
// and applies cosmos/cosmosdb-server.patch there, again whenever any of the
// three files changed (.installed holds them).
func installCosmos(ctx context.Context, cache string, log io.Writer) error {
	dir := filepath.Join(cache, cosmosDir)
	stamp := bytes.Join([][]byte{cosmosPackageJSON, cosmosPackageLock, cosmosPatch}, []byte("\x00"))
	if b, err := os.ReadFile(filepath.Join(dir, ".installed")); err == nil && bytes.Equal(b, stamp) && checkCosmos(cache) == nil {
		return nil
	}
	fmt.Fprintf(log, "[emulators] cosmos: npm ci (@vercel/cosmosdb-server %s) and its patch into %s\n", cosmosVersion, dir)
	tmp, err := os.MkdirTemp(cache, "cosmos.tmp.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": cosmosPackageJSON, "package-lock.json": cosmosPackageLock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return err
		}
	}
	if err := run(ctx, tmp, npmEnv(cache), log, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"); err != nil {
		return fmt.Errorf("npm ci: %w", err)
	}
	pkg := filepath.Join(tmp, "node_modules/@vercel/cosmosdb-server")
	if err := cosmosVersionIs(pkg); err != nil {
		return err
	}
	var out bytes.Buffer
	patch := exec.CommandContext(ctx, "patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-r", "-")
	patch.Dir, patch.Stdin, patch.Stdout, patch.Stderr = pkg, bytes.NewReader(cosmosPatch), &out, &out
	if err := patch.Run(); err != nil {
		return fmt.Errorf("testenv/cosmos/cosmosdb-server.patch does not apply to @vercel/cosmosdb-server %s: %v\n%s", cosmosVersion, err, out.String())
	}
	// Applied means: reversing it would apply cleanly.
	out.Reset()
	verify := exec.CommandContext(ctx, "patch", "-p1", "-R", "--dry-run", "--batch", "-f")
	verify.Dir, verify.Stdin, verify.Stdout, verify.Stderr = pkg, bytes.NewReader(cosmosPatch), &out, &out
	if err := verify.Run(); err != nil {
		return fmt.Errorf("testenv/cosmos/cosmosdb-server.patch did not apply whole to %s: %v\n%s", pkg, err, out.String())
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), stamp, 0o644); err != nil {
		return err
	}
	if err := replaceDir(tmp, dir); err != nil {
		return err
	}
	return checkCosmos(cache)
}

// cosmosVersionIs fails unless the package in dir is the version the patch
// was written for.
func cosmosVersionIs(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return fmt.Errorf("%w: %s (run scripts/emulators.sh install cosmos)", ErrNotInstalled, dir)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil || p.Version != cosmosVersion {
		return fmt.Errorf("testenv: @vercel/cosmosdb-server in %s is %q, and testenv/cosmos/cosmosdb-server.patch was written for %s: write the patch for the new version and update cosmosVersion", dir, p.Version, cosmosVersion)
	}
	return nil
}

// checkCosmos checks node, the server, its version and that every line
// the patch adds is in the file it patches.
func checkCosmos(cache string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("%w: node (apt-get install nodejs)", ErrNotInstalled)
	}
	pkg := filepath.Join(cache, cosmosPackage)
	if err := needFiles(filepath.Join(cache, cosmosCLI)); err != nil {
		return err
	}
	if err := cosmosVersionIs(pkg); err != nil {
		return err
	}
	adds := patchAdds(cosmosPatch)
	for _, file := range slices.Sorted(maps.Keys(adds)) { // the same file named on every run
		b, err := os.ReadFile(filepath.Join(pkg, file))
		for _, line := range adds[file] {
			if err != nil || !bytes.Contains(b, []byte(line)) {
				return fmt.Errorf("%w: the fix of %s in %s (testenv/cosmos/cosmosdb-server.patch; run scripts/emulators.sh install cosmos)", ErrNotInstalled, file, pkg)
			}
		}
	}
	return nil
}

// patchAdds returns, for each file a unified diff (-p1) changes, the
// lines it adds (trimmed, non-empty).
func patchAdds(diff []byte) map[string][]string {
	out := map[string][]string{}
	file := ""
	for _, l := range strings.Split(string(diff), "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			_, file, _ = strings.Cut(strings.Fields(l)[1], "/")
		case strings.HasPrefix(l, "+") && file != "":
			if t := strings.TrimSpace(l[1:]); t != "" {
				out[file] = append(out[file], t)
			}
		}
	}
	return out
}
