package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.work above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.work above %s", wd)
		}
	}
}

var cacheVarRE = regexp.MustCompile(`AGENTMEM_[A-Z_]*CACHE[A-Z_]*`)

// TestCacheVariableNames fails when the scripts and the docs name another
// variable for the emulators' install directory than the one testenv
// reads: scripts/emulators.sh installed into AGENTMEM_EMULATOR_CACHE while
// the tests looked in AGENTMEM_EMULATORS_CACHE (the CHANGELOG is not
// read).
func TestCacheVariableNames(t *testing.T) {
	root := repoRoot(t)
	scripts, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts under %s/scripts: %v", root, err)
	}
	docs := []string{filepath.Join(root, "README.md"), filepath.Join(root, "testenv", "README.md"), filepath.Join(root, "testenv", "doc.go")}
	named := map[string]bool{}
	for _, f := range append(scripts, docs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(b), "\n") {
			for _, v := range cacheVarRE.FindAllString(line, -1) {
				named[v] = true
				switch {
				case v == CacheEnv:
				default:
					t.Errorf("%s:%d names %s; testenv reads %s: %s", rel, i+1, v, CacheEnv, strings.TrimSpace(line))
				}
			}
		}
	}
	// The installer must read the same variable testenv reads.
	b, err := os.ReadFile(filepath.Join(root, "scripts", "emulators.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "${"+CacheEnv+":-") {
		t.Errorf("scripts/emulators.sh does not install into ${%s:-…}", CacheEnv)
	}
	if !named[CacheEnv] {
		t.Errorf("nothing names %s", CacheEnv)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range named {
			if !yield(k) {
				return
			}
		}
	}); len(got) > 1 {
		t.Errorf("cache variables named: %v, want only %s", got, CacheEnv)
	}
}

// TestCacheDirFromEnv: the variable wins, and without it the cache is
// .cache/emulators beside go.work.
func TestCacheDirFromEnv(t *testing.T) {
	t.Setenv(CacheEnv, "")
	got, err := cacheDir()
	if want := filepath.Join(repoRoot(t), ".cache", "emulators"); err != nil || got != want {
		t.Errorf("cacheDir() unset = %q, %v; want %q", got, err, want)
	}
	t.Setenv(CacheEnv, "/new")
	if got, err := cacheDir(); err != nil || got != "/new" {
		t.Errorf("cacheDir() set = %q, %v; want /new", got, err)
	}
}
