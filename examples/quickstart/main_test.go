package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunsAndRerun plays the quickstart twice on one database file with the
// scripted model: in the first process run 1 finds no memory and saves the
// fact, run 2 (a new session) starts with it; in the second, run 1 starts
// with it too and writes nothing. The root README's paragraph about the
// quickstart must name the runs and quote only output the second process
// prints.
func TestRunsAndRerun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	var first, again strings.Builder
	if err := run(t.Context(), &first, db, true); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), &again, db, true); err != nil {
		t.Fatal(err)
	}
	runs := func(out string) (string, string) {
		_, rest, ok := strings.Cut(out, "── run 1 ")
		r1, r2, ok2 := strings.Cut(rest, "── run 2 ")
		if !ok || !ok2 {
			t.Fatalf("output without run 1 and run 2:\n%s", out)
		}
		return r1, r2
	}
	r1, r2 := runs(first.String())
	for _, c := range []struct{ name, out, want string }{
		{"first process, run 1", r1, "carried no memory block"},
		{"first process, run 1", r1, "model calls write_memory"},
		{"first process, run 2", r2, "- moved to Hanoi; hates early flights\n</memory>"},
		{"first process, run 2", r2, "(no early flight)"},
	} {
		if !strings.Contains(c.out, c.want) {
			t.Errorf("%s: no %q in\n%s", c.name, c.want, c.out)
		}
	}
	a1, _ := runs(again.String())
	if !strings.Contains(a1, "</memory>") || !strings.Contains(a1, "I already have that in memory") || strings.Contains(a1, "write_memory") {
		t.Errorf("second process, run 1: want the memory block and no write, got\n%s", a1)
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, para, _ := strings.Cut(string(readme), "The quickstart plays")
	para, _, _ = strings.Cut(para, "\n\n")
	if !strings.Contains(para, "run 1") || !strings.Contains(para, "run 2") {
		t.Errorf("the README's quickstart paragraph does not name run 1 and run 2, which one process prints:\n%s", para)
	}
	quotes := regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(para, -1)
	if len(quotes) == 0 {
		t.Errorf("the README's quickstart paragraph quotes nothing of what a second process prints:\n%s", para)
	}
	for _, q := range quotes {
		if phrase := strings.Join(strings.Fields(q[1]), " "); !strings.Contains(again.String(), phrase) {
			t.Errorf("the README quotes %q, which the quickstart does not print", phrase)
		}
	}
}
