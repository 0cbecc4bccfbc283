package anthropic

import (
	"errors"
	"fmt"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// seedStore creates files (model path → content) for namespace ns.
func seedStore(t *testing.T, tl *Tool, ns string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		r := exec(t, tl, ns, "seed "+p, Command{Command: "create", Path: p, FileText: c})
		if r.IsError {
			t.Fatalf("seed %s: %s", p, r.Text)
		}
	}
}

func TestProgrammerErrors(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, nil); !errors.Is(err, ErrNoStore) {
		t.Fatalf("New(nil) = %v", err)
	}
	if _, err := Model(nil, "claude-sonnet-4-5").Generate(t.Context(), pruned.ModelRequest{}); !errors.Is(err, store.ErrNilArgument) {
		t.Fatalf("Model(nil): %v, want store.ErrNilArgument", err)
	}
	tl := newTool(t, store.New(backends[0].open(t), nil))
	if _, err := tl.Execute(t.Context(), "", "id", Command{Command: "view", Path: Root}); !errors.Is(err, ErrNoNamespace) {
		t.Fatalf("no namespace: %v", err)
	}
	if _, err := tl.Execute(t.Context(), "bob", "", Command{Command: "create", Path: "/memories/a.md"}); !errors.Is(err, ErrNoToolUseID) {
		t.Fatalf("no tool_use id: %v", err)
	}
}

func TestStrReplaceReplayAfterChange(t *testing.T) {
	t.Parallel()
	tl := newTool(t, store.New(backends[0].open(t), nil))
	seedStore(t, tl, "u", map[string]string{"/memories/a.md": "one\ntwo\n"})
	c := Command{Command: "str_replace", Path: "/memories/a.md", OldStr: "two", NewStr: "2"}
	first := exec(t, tl, "u", "t1", c)
	if again := exec(t, tl, "u", "t1", c); again != first {
		t.Fatalf("replay = %q, want %q", again.Text, first.Text)
	}
	exec(t, tl, "u", "t2", Command{Command: "insert", Path: "/memories/a.md", InsertLine: 0, InsertText: "zero"})
	// The file changed since: the replay still applies nothing.
	if again := exec(t, tl, "u", "t1", c); again.IsError || !strings.HasPrefix(first.Text, again.Text) {
		t.Fatalf("replay after change = %+v", again)
	}
	f, _ := tl.s.Read(t.Context(), "u/memories/a.md", 100)
	if f.Content != "zero\none\n2\n" {
		t.Fatalf("content %q", f.Content)
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0B", 1: "1B", 1023: "1023B", 1024: "1K", 1536: "1.5K", 4096: "4K", 1 << 20: "1M", 1<<20 + 1<<19: "1.5M", 1 << 40: "1024G"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
	if got := fmt.Sprint(splitLines("a\r\nb\rc\n\nd")); got != "[a b c  d]" {
		t.Errorf("splitLines = %s", got)
	}
}

// TestListedSizeIsWholeFile: a file longer than MaxFileChars is listed
// with its whole size, not the size of the part the tool would read.
func TestListedSizeIsWholeFile(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := store.New(b.open(t), nil)
			defer s.Close()
			tl := newTool(t, s)
			seedStore(t, tl, "u", map[string]string{
				"/memories/big.md":   strings.Repeat("a", 1<<20+1<<19), // 1.5 MiB
				"/memories/wide.md":  strings.Repeat("é", 1<<20),       // 1 Mi characters, 2 MiB
				"/memories/small.md": "é",
			})
			got := exec(t, tl, "u", "", Command{Command: "view", Path: Root}).Text
			want := "4.0K\t/memories\n1.5M\t/memories/big.md\n2B\t/memories/small.md\n2M\t/memories/wide.md"
			if !strings.HasSuffix(got, "\n"+want) {
				t.Fatalf("view:\n%s\nwant the lines\n%s", got, want)
			}
		})
	}
}

// TestDocumentedTexts: where the memory tool's documentation (and the
// TypeScript SDK's handler) defines a text, the tool returns it.
func TestDocumentedTexts(t *testing.T) {
	t.Parallel()
	tl := newTool(t, store.New(backends[0].open(t), nil))
	seedStore(t, tl, "u", map[string]string{"/memories/a.md": "one\ntwo\n", "/memories/node_modules/x.md": "x",
		"/memories/d/node_modules": "a file named node_modules"})
	for _, c := range []struct {
		cmd  Command
		want Result
	}{
		{Command{Command: "view", Path: "/memories"}, Result{Text: "Here're the files and directories up to 2 levels deep in /memories, " +
			"excluding hidden items and node_modules:\n4.0K\t/memories\n8B\t/memories/a.md\n4.0K\t/memories/d/"}},
		{Command{Command: "insert", Path: "/memories/a.md", InsertLine: 3, InsertText: "x"}, Result{IsError: true,
			Text: "Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]"}},
	} {
		if got := exec(t, tl, "u", "t", c.cmd); got != c.want {
			t.Errorf("%+v:\n got %+v\nwant %+v", c.cmd, got, c.want)
		}
	}
}
