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
// the tests looked in AGENTMEM_EMULATORS_CACHE. The deprecated spelling
// may appear only in the script's fallback and on lines that say it is
// deprecated (the CHANGELOG is not read).
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
				case v == DeprecatedCacheEnv:
					// The fallback ${AGENTMEM_EMULATORS_CACHE:-${AGENTMEM_EMULATOR_CACHE:-…}},
					// or a line that says it is deprecated.
					if !strings.Contains(line, "${"+CacheEnv+":-${"+DeprecatedCacheEnv) && !strings.Contains(line, "deprecated") {
						t.Errorf("%s:%d names %s outside its deprecated fallback (testenv reads %s): %s", rel, i+1, v, CacheEnv, strings.TrimSpace(line))
					}
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
	}); len(got) > 2 {
		t.Errorf("cache variables named: %v, want only %s (and %s, deprecated)", got, CacheEnv, DeprecatedCacheEnv)
	}
}

// TestCacheDirFromEnv: the variable wins, the deprecated one serves when it
// is unset, and without either the cache is .cache/emulators beside go.work.
func TestCacheDirFromEnv(t *testing.T) {
	t.Setenv(CacheEnv, "")
	t.Setenv(DeprecatedCacheEnv, "")
	got, err := cacheDir()
	if want := filepath.Join(repoRoot(t), ".cache", "emulators"); err != nil || got != want {
		t.Errorf("cacheDir() with neither = %q, %v; want %q", got, err, want)
	}
	t.Setenv(DeprecatedCacheEnv, "/old")
	if got, err := cacheDir(); err != nil || got != "/old" {
		t.Errorf("cacheDir() with only %s = %q, %v; want /old", DeprecatedCacheEnv, got, err)
	}
	t.Setenv(CacheEnv, "/new")
	if got, err := cacheDir(); err != nil || got != "/new" {
		t.Errorf("cacheDir() with both = %q, %v; want /new", got, err)
	}
}
