package releasecheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelease checks what make release did in the scratch repository and
// that it refuses what it must, changing nothing.
func TestRelease(t *testing.T) {
	for _, m := range cand.modules {
		if out, err := git(cand.repo, "tag", "-l", m+"/"+cand.version); err != nil || strings.TrimSpace(out) == "" {
			t.Errorf("make release did not tag %s/%s (%v)", m, cand.version, err)
		}
	}
	if out, err := git(cand.repo, "status", "--porcelain"); err != nil || out != "" {
		t.Errorf("make release left the tree dirty: %s %v", out, err)
	}
	// The workspace still builds the released tree (go.work's replaces moved with the version).
	// (Two packages or more: go build writes no binary.)
	if out, err := command(cand.repo, nil, "go", "build", "./cmd/agentmem/", "./examples/..."); err != nil {
		t.Errorf("after make release, the workspace no longer builds cmd/agentmem and examples: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(cand.repo, "go.work")); err != nil || !strings.Contains(string(b), "\n// Only the installable") {
		t.Errorf("make release dropped go.work's comments (%v)", err)
	}

	refuses := func(version, want string) {
		t.Helper()
		head, err := git(cand.repo, "rev-parse", "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		out, err := command(cand.repo, nil, "make", "-s", "release", "VERSION="+version)
		if err == nil {
			t.Errorf("make release VERSION=%s was not refused:\n%s", version, out)
		} else if !strings.Contains(out, want) {
			t.Errorf("make release VERSION=%s said %q, want %q", version, out, want)
		}
		if now, _ := git(cand.repo, "rev-parse", "HEAD"); now != head {
			t.Errorf("a refused make release VERSION=%s committed", version)
		}
	}
	refuses(cand.version, "is already used")
	refuses("1.2.3", "is malformed")
	refuses("v1.2", "is malformed")
	refuses("v01.2.3", "is malformed")
	refuses("v2.0.0", "/v2 suffix")
	refuses("", "give the version")
	dirty := filepath.Join(cand.repo, "core", "DIRTY")
	if err := os.WriteFile(dirty, []byte("dirty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refuses("v0.99.1", "dirty")
	if err := os.Remove(dirty); err != nil {
		t.Fatal(err)
	}
}

// TestModulesAtCandidate: every module at the candidate is tidy and vets
// with GOWORK=off, its siblings at the candidate served by the proxy.
func TestModulesAtCandidate(t *testing.T) {
	for _, m := range cand.modules {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(cand.repo, m)
			if out, err := command(dir, cand.env, "go", "mod", "tidy", "-diff"); err != nil {
				t.Errorf("%s at %s is not tidy with GOWORK=off: %v\n%s", m, cand.version, err, out)
			}
			if out, err := command(dir, cand.env, "go", "vet", "./..."); err != nil {
				t.Errorf("go vet with GOWORK=off fails in %s at %s: %v\n%s", m, cand.version, err, out)
			}
		})
	}
}
