package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/console"
)

// TestServeProxyExampleLimits checks docs/deploy.md's nginx example
// against serve's body limits: each client_max_body_size names the flag
// it follows and that flag's default, and lets a little more through;
// the import location takes every import path (the API's, under
// /console/ too, and the console's upload) and no other; a body over the
// proxy's limits is answered with the API's too-large problem.
func TestServeProxyExampleLimits(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, conf, ok := strings.Cut(string(b), "```nginx\n")
	conf, _, _ = strings.Cut(conf, "```")
	if !ok {
		t.Fatal("docs/deploy.md has no nginx example")
	}
	serve, _, err := (&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}).rootCmd().Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	limit := regexp.MustCompile(`^\s*client_max_body_size (\d+)m;\s+# serve (--[a-z-]+) \((\d+) MiB\)`)
	location := regexp.MustCompile(`^\s*location (~ )?(\S+) \{`)
	where := map[string]string{} // flag -> the location that follows it
	loc := ""
	for line := range strings.SplitSeq(conf, "\n") {
		if m := location.FindStringSubmatch(line); m != nil {
			loc = m[2]
		}
		if strings.Contains(line, "client_max_body_size") {
			m := limit.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%q: want client_max_body_size Nm; # serve --flag (N MiB)", strings.TrimSpace(line))
				continue
			}
			fl := serve.Flags().Lookup(strings.TrimPrefix(m[2], "--"))
			if fl == nil {
				t.Errorf("%q: serve has no flag %s", strings.TrimSpace(line), m[2])
				continue
			}
			def, _ := strconv.ParseInt(fl.DefValue, 10, 64)
			proxy, _ := strconv.ParseInt(m[1], 10, 64)
			named, _ := strconv.ParseInt(m[3], 10, 64)
			if named<<20 != def || proxy<<20 <= def {
				t.Errorf("%q: %s's default is %d bytes: name it, and let more through", strings.TrimSpace(line), m[2], def)
			}
			where[m[2]] = loc
		}
	}
	if where["--max-body"] != "/" {
		t.Errorf("--max-body bounds location %q, want /", where["--max-body"])
	}
	imports, err := regexp.Compile(where["--max-import"])
	if err != nil || where["--max-import"] == "" {
		t.Fatalf("--max-import bounds location %q: %v", where["--max-import"], err)
	}
	for path, want := range map[string]bool{
		"/api/v1/namespaces/ana/import": true, "/console/api/v1/namespaces/ana/import": true, "/console/ns/ana/import": true,
		"/api/v1/namespaces/ana/files/main/import": false, "/api/v1/namespaces/ana/files/import": false, "/api/v1/namespaces/ana/restore/import": false,
	} {
		if imports.MatchString(path) != want {
			t.Errorf("the import location %s matches %s: %v, want %v", where["--max-import"], path, !want, want)
		}
	}
	// error_page 413's body is the API's problem.
	m := regexp.MustCompile(`return 413 '(.*)\\n';`).FindStringSubmatch(conf)
	var p console.Problem
	if m == nil || json.Unmarshal([]byte(m[1]), &p) != nil || p.Type != console.ProblemTypePrefix+"too-large" || p.Status != 413 || p.Title == "" {
		t.Errorf("nginx's 413 answers %v, want the API's too-large problem", m)
	}
	if !strings.Contains(conf, "error_page 413 @too_large;") {
		t.Error("nginx's 413 page is not the problem")
	}
}
