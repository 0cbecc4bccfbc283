package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// TestLogPagesThroughHistory: with pages of 2 entries, log returns exactly
// --limit entries across pages, newest first, says when more are left,
// and with --limit 0 walks every page of a prefix, ordered by path.
func TestLogPagesThroughHistory(t *testing.T) {
	defer func(n int) { historyPageSize = n }(historyPageSize)
	historyPageSize = 2
	url := "memlog:" + filepath.Join(t.TempDir(), "journal") + "?history=on"
	s := openURL(t, url)
	want := map[string][]string{} // path → versions, oldest first
	for _, p := range []string{"ana/a.md", "ana/b.md"} {
		version := ""
		for i := range 7 {
			m, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: fmt.Sprintf("v%d\n", i), Expected: version})
			if err != nil {
				t.Fatal(err)
			}
			version = m.Version
			want[p] = append(want[p], version)
		}
	}
	s.Close()

	logJSON := func(args ...string) ([]logLine, string) {
		t.Helper()
		a, out, errOut := testApp()
		if code := a.run(t.Context(), append([]string{"--store", url, "log", "--json"}, args...)); code != exitOK {
			t.Fatalf("log %v: exit %d: %s", args, code, errOut)
		}
		var lines []logLine
		for l := range strings.Lines(out.String()) {
			var e logLine
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("log %v: line %q: %v", args, l, err)
			}
			lines = append(lines, e)
		}
		return lines, errOut.String()
	}
	versions := func(lines []logLine) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l.Version)
		}
		return out
	}
	newest := func(p string, n int) []string {
		v := slices.Clone(want[p])
		slices.Reverse(v)
		return v[:n]
	}

	lines, errOut := logJSON("-n", "5", "ana/a.md")
	if got := versions(lines); !slices.Equal(got, newest("ana/a.md", 5)) {
		t.Errorf("log -n 5 = %v, want the 5 newest %v", got, newest("ana/a.md", 5))
	}
	if !strings.Contains(errOut, "5 changes shown; more are recorded") {
		t.Errorf("log -n 5 of 7: stderr %q, want the note that more are recorded", errOut)
	}
	lines, errOut = logJSON("-n", "7", "ana/a.md")
	if len(lines) != 7 || errOut != "" {
		t.Errorf("log -n 7 of 7: %d entries, stderr %q; want 7 and nothing", len(lines), errOut)
	}
	lines, errOut = logJSON("-n", "0", "--prefix", "ana/")
	if got, w := versions(lines), append(newest("ana/a.md", 7), newest("ana/b.md", 7)...); !slices.Equal(got, w) || errOut != "" {
		t.Errorf("log -n 0 --prefix ana/ = %v (stderr %q), want %v", got, errOut, w)
	}
	for i, l := range lines {
		if i%7 != 6 && l.Previous != lines[i+1].Version {
			t.Errorf("entry %d: previous %q, want the next entry's version %q", i, l.Previous, lines[i+1].Version)
		}
	}
}
