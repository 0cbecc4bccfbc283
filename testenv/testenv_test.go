//go:build unix

package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmem/agentmem/contract/emulator"
)

// clearEnv unsets every variable testenv reads, for the test.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, s := range specs {
		vars := s.vars
		for _, v := range vars {
			t.Setenv(v, "")
			os.Unsetenv(v)
		}
	}
	t.Setenv(ModeEnv, "")
}

func TestEnvironmentWins(t *testing.T) {
	clearEnv(t)
	t.Setenv(emulator.PostgresURL, "postgres://example.invalid/db")
	t.Setenv(emulator.CosmosEndpoint, "http://example.invalid:1")
	t.Setenv(emulator.FirestoreHost, "example.invalid:2")
	// A bad cache and no Docker: starting anything would fail.
	t.Setenv(CacheEnv, t.TempDir())
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	env, err := Start(t.Context(), Postgres, Cosmos, Firestore, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Emulator{Postgres, Cosmos, Firestore} {
		if got := env.Started()[e]; got != "env" {
			t.Errorf("%s started as %q, want env", e, got)
		}
	}
	if got := os.Getenv(emulator.CosmosKey); got != CosmosKey {
		t.Errorf("AGENTMEM_COSMOS_KEY = %q, want the well-known key", got)
	}
	if got := os.Getenv("FIRESTORE_EMULATOR_HOST"); got != "example.invalid:2" {
		t.Errorf("FIRESTORE_EMULATOR_HOST = %q, want AGENTMEM_FIRESTORE_EMULATOR_HOST's value", got)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv(emulator.CosmosKey); got != "" {
		t.Errorf("Close left AGENTMEM_COSMOS_KEY = %q set", got)
	}
	if got := os.Getenv(emulator.PostgresURL); got != "postgres://example.invalid/db" {
		t.Errorf("Close changed the given AGENTMEM_POSTGRES_URL to %q", got)
	}
}

func TestBadModeAndEmulator(t *testing.T) {
	clearEnv(t)
	t.Setenv(ModeEnv, "vm")
	env, err := Start(t.Context(), Postgres)
	if !errors.Is(err, ErrMode) || !strings.Contains(err.Error(), `"vm"`) {
		t.Errorf("mode vm: err = %v, want ErrMode naming it", err)
	}
	env.Close()
	t.Setenv(ModeEnv, "processes")
	env, err = Start(t.Context(), Emulator("mysql"))
	if err == nil || !strings.Contains(err.Error(), "mysql") {
		t.Errorf("unknown emulator: err = %v", err)
	}
	env.Close()
}

func TestContainersNeedDocker(t *testing.T) {
	clearEnv(t)
	t.Setenv(ModeEnv, "containers")
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	env, err := Start(t.Context(), DynamoDB)
	defer env.Close()
	if !errors.Is(err, ErrNoDocker) {
		t.Fatalf("err = %v, want ErrNoDocker", err)
	}
}

func TestProcessesNeedTheInstall(t *testing.T) {
	clearEnv(t)
	t.Setenv(ModeEnv, "processes")
	t.Setenv(CacheEnv, t.TempDir()) // empty: nothing installed
	if _, err := exec.LookPath("node"); err == nil {
		env, err := Start(t.Context(), Cosmos)
		env.Close()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "scripts/emulators.sh install") {
			t.Errorf("cosmos: err = %v, want ErrNotInstalled with instructions", err)
		}
	}
	// An unpatched Cosmos server is refused.
	cache := os.Getenv(CacheEnv)
	handler := filepath.Join(cache, filepath.Dir(cosmosCLI), "handler")
	if err := os.MkdirAll(handler, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cache, cosmosCLI), []byte("//"), 0o644)
	os.WriteFile(filepath.Join(cache, cosmosPackage, "package.json"), []byte(`{"version": "`+cosmosVersion+`"}`), 0o644)
	os.WriteFile(filepath.Join(handler, "batch-documents.js"), []byte(strings.Join(patchAdds(cosmosPatch)["lib/handler/batch-documents.js"], "\n")), 0o644)
	os.WriteFile(filepath.Join(handler, "read-document.js"), []byte("if (data[path] !== clientKeys[i])"), 0o644)
	os.MkdirAll(filepath.Join(handler, "../account"), 0o755)
	os.WriteFile(filepath.Join(handler, "../account/items.js"), []byte(strings.Join(patchAdds(cosmosPatch)["lib/account/items.js"], "\n")), 0o644)
	if _, err := exec.LookPath("node"); err == nil {
		env, err := Start(t.Context(), Cosmos)
		env.Close()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "read-document.js") {
			t.Errorf("unpatched cosmos: err = %v, want ErrNotInstalled naming the fix", err)
		}
	}
	if _, err := javaBin(); err == nil {
		env, err := Start(t.Context(), DynamoDB)
		env.Close()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "DynamoDBLocal.jar") {
			t.Errorf("dynamodb: err = %v, want ErrNotInstalled naming the jar", err)
		}
	}
}

type fakeM struct {
	code int
	ran  *bool
}

func (m fakeM) Run() int { *m.ran = true; return m.code }

func TestWrap(t *testing.T) {
	clearEnv(t)
	ran := false
	if code := Wrap(fakeM{3, &ran}).Run(); code != 3 || !ran {
		t.Errorf("no emulators: code %d ran %v, want 3 true", code, ran)
	}
	ran = false
	t.Setenv(ModeEnv, "bogus")
	if code := Wrap(fakeM{0, &ran}, Postgres).Run(); code != 1 || ran {
		t.Errorf("failed start: code %d ran %v, want 1 false", code, ran)
	}
	if code := Wrap(nil).Run(); code != 1 {
		t.Errorf("nil M: code %d, want 1", code)
	}
}

// TestProcessPostgres starts PostgreSQL as a process, checks that it
// answers, and that Close stops its process group and removes its files.
func TestProcessPostgres(t *testing.T) {
	clearEnv(t)
	t.Setenv(ModeEnv, "processes")
	env, err := Start(t.Context(), Postgres)
	if err != nil {
		env.Close()
		t.Fatal(err)
	}
	url := os.Getenv(emulator.PostgresURL)
	if env.Started()[Postgres] != "process" || env.Var(emulator.PostgresURL) != url ||
		!strings.HasPrefix(url, "postgres://postgres@127.0.0.1:") {
		t.Fatalf("started %v, URL %q", env.Started(), url)
	}
	bin, _ := pgBin()
	port := url[strings.LastIndex(url, ":")+1 : strings.Index(url, "/postgres?")]
	isready := func() error {
		return exec.Command(filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", port).Run()
	}
	if err := isready(); err != nil {
		t.Fatalf("pg_isready: %v", err)
	}
	var pgid int
	var dirs []string
	env.mu.Lock()
	n := len(env.stops)
	env.mu.Unlock()
	if n < 2 {
		t.Fatalf("%d cleanups registered, want the data dir and the process", n)
	}
	out, _ := exec.Command("ps", "-e", "-o", "pgid=,args=").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "-p "+port) && strings.Contains(l, "postgres") {
			f := strings.Fields(l)
			pgid = atoi(f[0])
			for i, a := range f {
				if a == "-D" && i+1 < len(f) {
					dirs = append(dirs, filepath.Dir(f[i+1]))
				}
			}
		}
	}
	if pgid <= 1 || len(dirs) == 0 {
		t.Fatalf("no postgres process on port %s in ps:\n%s", port, out)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pgid, 0); err == nil {
		t.Errorf("process group %d still alive after Close", pgid)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("data dir %s left behind (%v)", dirs[0], err)
	}
	if os.Getenv(emulator.PostgresURL) != "" {
		t.Error("Close left AGENTMEM_POSTGRES_URL set")
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestProcessPostgresLongTMPDIR starts PostgreSQL as a process with a
// TMPDIR too long for a unix socket path (sun_path holds 107 bytes): its
// socket directory must not be under TMPDIR then.
func TestProcessPostgresLongTMPDIR(t *testing.T) {
	clearEnv(t)
	t.Setenv(ModeEnv, "processes")
	long := filepath.Join(t.TempDir(), strings.Repeat("a-long-clone-path-", 6))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	// The postgres user (as root) walks down to its directories.
	for d := long; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", long)
	env, err := Start(t.Context(), Postgres)
	defer env.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
}
