package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// keyFileTarget is the key file a documented keygen line appends to.
var keyFileTarget = regexp.MustCompile(`>>\s*\S+`)

// keygenKey matches the key keygen prints on its first line.
var keygenKey = regexp.MustCompile(`(?m)^[0-9a-f]{64}$`)

// TestDocsKeygenKeepsTheKey runs, in sh, every keygen line of the
// documents (the READMEs, docs/) and of keygen's own help that appends to
// a key file, with the file moved to a temporary one: the key must reach
// the terminal (keygen shows it once, and the file holds only its hash)
// and the file the key's line.
func TestDocsKeygenKeepsTheKey(t *testing.T) {
	type doc struct{ where, line string }
	var lines []doc
	root := filepath.Join("..", "..")
	for _, p := range docFiles(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, c := range codeOf(string(b)) {
			lines = append(lines, doc{rel + ":" + strconv.Itoa(c.line), c.text})
		}
	}
	cli := (&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, isTerminal: func(any) bool { return false }}).rootCmd()
	kg, _, err := cli.Find([]string{"serve", "keygen"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(kg.Example, "\n") {
		lines = append(lines, doc{"agentmem serve keygen --help", l})
	}
	ran := 0
	for _, d := range lines {
		if !strings.Contains(d.line, "agentmem serve keygen") || !keyFileTarget.MatchString(d.line) {
			continue
		}
		ran++
		keys := filepath.Join(t.TempDir(), "keys")
		sh := keyFileTarget.ReplaceAllString(strings.TrimPrefix(strings.TrimSpace(d.line), "$ "), ">> "+keys)
		var out bytes.Buffer
		cmd := exec.Command("sh", "-c", sh)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: %s: %v\n%s", d.where, sh, err, out.Bytes())
			continue
		}
		key := keygenKey.FindString(out.String())
		if key == "" {
			t.Errorf("%s: %q shows no key: it is lost (the key file holds only its hash)\n%s", d.where, d.line, out.Bytes())
			continue
		}
		b, err := os.ReadFile(keys)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); !strings.HasPrefix(got, agentmemmcp.HashKey(key)+" ") || strings.Count(got, "\n") != 1 {
			t.Errorf("%s: the key file holds %q, want the line of key %s", d.where, got, key)
		}
	}
	if ran < 2 {
		t.Fatalf("ran %d keygen lines, want the docs' and the help's", ran)
	}
}
