package testenv

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/contract/emulator"
)

// TestNeeds reads the emulators of the repository's modules from their
// TestMain, as test.sh and bench.sh ask: e2e's four were missing from the
// map the scripts kept.
func TestNeeds(t *testing.T) {
	root := repoRoot(t)
	for dir, want := range map[string][]Emulator{
		"postgres":     {Postgres},
		"cosmosdb":     {Cosmos},
		"cmd/agentmem": {Postgres, DynamoDB},
		"e2e":          All,
		"core":         nil,
	} {
		got, err := Needs(filepath.Join(root, dir))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Needs(%s) = %v, %v; want %v", dir, got, err, want)
		}
	}
	// An aliased import counts; a file that is not a test, testdata and a nested module do not.
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := func(sel string) string {
		return "package x\nimport te \"github.com/agentmem/agentmem/testenv\"\nvar _ = " + sel + "\n"
	}
	write("a_test.go", src("te.Firestore"))
	write("b.go", src("te.Postgres"))
	write("testdata/c_test.go", src("te.Cosmos"))
	write("nested/go.mod", "module nested\n")
	write("nested/d_test.go", src("te.DynamoDB"))
	if got, err := Needs(dir); err != nil || !slices.Equal(got, []Emulator{Firestore}) {
		t.Errorf("Needs(temp module) = %v, %v; want [firestore]", got, err)
	}
}

// TestEndpointVarsNameTheirEmulator: contract/emulator's message for a
// missing variable names the emulator testenv's table gives it to.
func TestEndpointVarsNameTheirEmulator(t *testing.T) {
	for e, s := range specs {
		for _, v := range s.vars {
			if !strings.HasPrefix(v, "AGENTMEM_") {
				continue
			}
			t.Setenv(v, "")
			if _, msg := emulator.Lookup(v); !strings.Contains(msg, "the "+string(e)+" emulator") {
				t.Errorf("Lookup(%s) says %q, want it to name the %s emulator", v, msg, e)
			}
		}
	}
	if len(specs) != len(All) {
		t.Errorf("specs has %d emulators, All %d", len(specs), len(All))
	}
}

// TestCosmosPatchPinned: the patch is for the version package.json pins,
// and it adds lines to both handler files.
func TestCosmosPatchPinned(t *testing.T) {
	var p struct{ Dependencies map[string]string }
	if err := json.Unmarshal(cosmosPackageJSON, &p); err != nil {
		t.Fatal(err)
	}
	if got := p.Dependencies["@vercel/cosmosdb-server"]; got != cosmosVersion {
		t.Errorf("cosmos/package.json pins @vercel/cosmosdb-server %q, the patch is for %s", got, cosmosVersion)
	}
	adds := patchAdds(cosmosPatch)
	for _, f := range []string{"lib/handler/read-document.js", "lib/handler/batch-documents.js"} {
		if len(adds[f]) == 0 {
			t.Errorf("the patch adds nothing to %s: %v", f, adds)
		}
	}
}

// TestCheckCosmos: a server of another version, or one the patch did not
// reach, is ErrNotInstalled saying which.
func TestCheckCosmos(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed (apt-get install nodejs)")
	}
	cache := t.TempDir()
	pkg := filepath.Join(cache, cosmosPackage)
	setVersion := func(v string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(pkg, "lib/handler"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"version": "`+v+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cache, cosmosCLI), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setVersion("1.0.2")
	if err := checkCosmos(cache); err == nil || !strings.Contains(err.Error(), `"1.0.2"`) || !strings.Contains(err.Error(), "written for "+cosmosVersion) {
		t.Errorf("another version: %v", err)
	}
	setVersion(cosmosVersion)
	for f, added := range patchAdds(cosmosPatch) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(pkg, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, f), []byte(strings.Join(added, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkCosmos(cache); err != nil {
		t.Errorf("patched: %v", err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "lib/handler/read-document.js"), []byte("upstream"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkCosmos(cache); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "read-document.js") {
		t.Errorf("unpatched read-document.js: %v", err)
	}
}
