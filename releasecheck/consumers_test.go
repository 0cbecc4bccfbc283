package releasecheck

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// sdks are what no consumer gets unless its script allows it (no-sdk): a
// module path or package path, followed by a space, that matches.
var sdks = map[string]*regexp.Regexp{
	"adk":    regexp.MustCompile(`^google\.golang\.org/(adk|genai)[/ ]`),
	"aws":    regexp.MustCompile(`^github\.com/aws/`),
	"azure":  regexp.MustCompile(`^github\.com/Azure/`),
	"gcloud": regexp.MustCompile(`^(cloud\.google\.com/|google\.golang\.org/api[/ ]|github\.com/googleapis/)`),
	"pgx":    regexp.MustCompile(`^github\.com/jackc/`),
	"sqlite": regexp.MustCompile(`^github\.com/ncruces/go-sqlite3`),
}

// TestConsumers runs testdata/consumers/*.txtar, each an outside module
// using the candidate. Besides testscript's own commands they have:
//
//	golden FILE       stdout (go list -m all, or go version -m's dep lines)
//	                  with the candidate version spelled CANDIDATE and
//	                  checksums left out, written to FILE for cmp
//	no-sdk FILE [KEY|=PATH]...
//	                  no line of FILE is of an SDK in sdks but the KEYs
//	                  allowed; =PATH allows that one module path
//	nonempty FILE     FILE exists and is not empty
//	only FILE PATH... every line of FILE after the first (the main module)
//	                  is one of the PATHs
//
// Scripts see $AGENTMEM (the repository's module path prefix) and
// $CANDIDATE. With -update a failing cmp rewrites the script's golden file.
func TestConsumers(t *testing.T) {
	goEnv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOSUMDB", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		goEnv[k] = strings.TrimSpace(string(out))
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/consumers",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			for k, v := range goEnv {
				e.Setenv(k, v)
			}
			for _, kv := range cand.env {
				k, v, _ := strings.Cut(kv, "=")
				e.Setenv(k, v)
			}
			e.Setenv("AGENTMEM", repoPath)
			e.Setenv("CANDIDATE", cand.version)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"golden": cmdGolden,
			"no-sdk": cmdNoSDK,
			"only":   cmdOnly,
			"nonempty": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: nonempty FILE")
				}
				if fi, err := os.Stat(ts.MkAbs(args[0])); err != nil || fi.Size() == 0 {
					ts.Fatalf("%s is missing or empty (%v)", args[0], err)
				}
			},
		},
	})
}

// goldenLine turns a line of go list -m all ("path version") or of go
// version -m ("\tdep\tpath\tversion\tsum") into "path version", the
// candidate spelled CANDIDATE; ok is false for other lines.
func goldenLine(line string) (string, bool) {
	f := strings.Fields(line)
	switch {
	case len(f) >= 3 && (f[0] == "dep" || f[0] == "=>"):
		f = f[1:3]
	case len(f) >= 1 && len(f) <= 2 && !strings.HasSuffix(f[0], ":") && f[0] != "path" && f[0] != "mod" && f[0] != "build":
	default:
		return "", false
	}
	return strings.ReplaceAll(strings.Join(f, " "), cand.version, "CANDIDATE"), true
}

func cmdGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: golden FILE")
	}
	var lines []string
	for _, l := range strings.Split(ts.ReadFile("stdout"), "\n") {
		if g, ok := goldenLine(l); ok {
			lines = append(lines, g)
		}
	}
	if len(lines) == 0 {
		ts.Fatalf("golden: stdout holds no module lines")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func cmdNoSDK(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: no-sdk FILE [KEY|=PATH]...")
	}
	allowed := args[1:]
	for _, a := range allowed {
		if _, ok := sdks[a]; !ok && !strings.HasPrefix(a, "=") {
			ts.Fatalf("no-sdk: unknown SDK key %q", a)
		}
	}
	var bad []string
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || slices.Contains(allowed, "="+f[0]) {
			continue
		}
		for key, re := range sdks {
			if !slices.Contains(allowed, key) && re.MatchString(f[0]+" ") {
				bad = append(bad, fmt.Sprintf("%s (%s)", f[0], key))
			}
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		ts.Fatalf("%s has SDKs this consumer did not ask for: %s", args[0], strings.Join(bad, ", "))
	}
}

func cmdOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: only FILE PATH...")
	}
	lines := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
	var other []string
	for _, line := range lines[1:] {
		if f := strings.Fields(line); len(f) > 0 && !slices.Contains(args[1:], f[0]) {
			other = append(other, f[0])
		}
	}
	if len(other) > 0 {
		ts.Fatalf("%s has modules besides %v: %v", args[0], args[1:], other)
	}
}
