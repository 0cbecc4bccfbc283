package anthropic

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// seed is the memory every table case starts from (model paths).
var seed = map[string]string{
	"/memories/notes.md":          "alpha\nbeta\ngamma\n",
	"/memories/dup.md":            "x\nx\nyx\n",
	"/memories/proj/plan.md":      "step one\n",
	"/memories/proj/deep/more.md": "deeper\n",
	"/memories/proj/deep/x/y.md":  "hidden by depth\n",
	"/memories/.hidden/secret.md": "s",
	"/memories/big.md":            strings.Repeat("a", 1536),
}

type cmdCase struct {
	name string
	cmd  Command
	want Result
	// after lists model paths whose content must be as given ("" = absent).
	after map[string]string
}

func errResult(s string) Result { return Result{Text: s, IsError: true} }

var cmdCases = []cmdCase{
	{name: "view_root", cmd: Command{Command: "view", Path: "/memories"}, want: ok(
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n" +
			"4.0K\t/memories\n" +
			"1.5K\t/memories/big.md\n" +
			"7B\t/memories/dup.md\n" +
			"17B\t/memories/notes.md\n" +
			"4.0K\t/memories/proj/\n" +
			"4.0K\t/memories/proj/deep/\n" +
			"9B\t/memories/proj/plan.md")},
	{name: "view_dir", cmd: Command{Command: "view", Path: "/memories/proj"}, want: ok(
		"Here're the files and directories up to 2 levels deep in /memories/proj, excluding hidden items:\n" +
			"4.0K\t/memories/proj\n" +
			"4.0K\t/memories/proj/deep/\n" +
			"7B\t/memories/proj/deep/more.md\n" +
			"4.0K\t/memories/proj/deep/x/\n" +
			"9B\t/memories/proj/plan.md")},
	{name: "view_file", cmd: Command{Command: "view", Path: "/memories/notes.md"}, want: ok(
		"Here's the content of /memories/notes.md with line numbers:\n     1\talpha\n     2\tbeta\n     3\tgamma\n     4\t")},
	{name: "view_range", cmd: Command{Command: "view", Path: "/memories/notes.md", ViewRange: []int64{2, 3}}, want: ok(
		"Here's the content of /memories/notes.md with line numbers:\n     2\tbeta\n     3\tgamma")},
	{name: "view_range_to_end", cmd: Command{Command: "view", Path: "/memories/notes.md", ViewRange: []int64{3, -1}}, want: ok(
		"Here's the content of /memories/notes.md with line numbers:\n     3\tgamma\n     4\t")},
	{name: "view_missing", cmd: Command{Command: "view", Path: "/memories/nope.md"},
		want: errResult("The path /memories/nope.md does not exist. Please provide a valid path.")},
	{name: "view_outside", cmd: Command{Command: "view", Path: "/etc/passwd"},
		want: errResult("Path must start with /memories, got: /etc/passwd")},
	{name: "view_traversal", cmd: Command{Command: "view", Path: "/memories/../etc"},
		want: errResult("Path /memories/../etc would escape /memories directory")},
	{name: "view_backslash_traversal", cmd: Command{Command: "view", Path: `/memories/..\etc`},
		want: errResult(`Path /memories/..\etc would escape /memories directory`)},
	{name: "view_encoded_traversal", cmd: Command{Command: "view", Path: "/memories/%2e%2e%2fetc"},
		want: errResult("Path /memories/%2e%2e%2fetc would escape /memories directory")},
	{name: "view_invalid_segment", cmd: Command{Command: "view", Path: "/memories/a b.md"},
		want: errResult("The path /memories/a b.md is not a valid memory path: use names of letters, digits, '.', '-' and '_' (at most 200 characters each).")},

	{name: "create", cmd: Command{Command: "create", Path: "/memories/new/n.md", FileText: "hello\n"},
		want: ok("File created successfully at: /memories/new/n.md"), after: map[string]string{"/memories/new/n.md": "hello\n"}},
	{name: "create_exists", cmd: Command{Command: "create", Path: "/memories/notes.md", FileText: "x"},
		want: errResult("File /memories/notes.md already exists"), after: map[string]string{"/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "create_over_dir", cmd: Command{Command: "create", Path: "/memories/proj", FileText: "x"},
		want: errResult("File /memories/proj already exists")},
	{name: "create_under_file", cmd: Command{Command: "create", Path: "/memories/notes.md/x.md", FileText: "x"},
		want: errResult("The path /memories/notes.md is a file, not a directory."), after: map[string]string{"/memories/notes.md/x.md": ""}},

	{name: "str_replace", cmd: Command{Command: "str_replace", Path: "/memories/notes.md", OldStr: "beta", NewStr: "BETA"},
		want: ok("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
			"     1\talpha\n     2\tBETA\n     3\tgamma\n     4\t"),
		after: map[string]string{"/memories/notes.md": "alpha\nBETA\ngamma\n"}},
	{name: "str_replace_missing", cmd: Command{Command: "str_replace", Path: "/memories/notes.md", OldStr: "delta", NewStr: "x"},
		want: errResult("No replacement was performed, old_str `delta` did not appear verbatim in /memories/notes.md.")},
	{name: "str_replace_multiple", cmd: Command{Command: "str_replace", Path: "/memories/dup.md", OldStr: "x", NewStr: "z"},
		want: errResult("No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2, 3. Please ensure it is unique"),
		after: map[string]string{"/memories/dup.md": seed["/memories/dup.md"]}},
	{name: "str_replace_no_file", cmd: Command{Command: "str_replace", Path: "/memories/nope.md", OldStr: "a", NewStr: "b"},
		want: errResult("The path /memories/nope.md does not exist. Please provide a valid path.")},
	{name: "str_replace_dir", cmd: Command{Command: "str_replace", Path: "/memories/proj", OldStr: "a", NewStr: "b"},
		want: errResult("The path /memories/proj is not a file.")},

	{name: "insert", cmd: Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 1, InsertText: "inserted\n"},
		want: ok("The file /memories/notes.md has been edited."), after: map[string]string{"/memories/notes.md": "alpha\ninserted\nbeta\ngamma\n"}},
	{name: "insert_end", cmd: Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 3, InsertText: "last"},
		want: ok("The file /memories/notes.md has been edited."), after: map[string]string{"/memories/notes.md": "alpha\nbeta\ngamma\nlast\n"}},
	{name: "insert_bad_line", cmd: Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 4, InsertText: "x"},
		want: errResult("Invalid `insert_line` parameter: 4. It should be within the range [0, 3].")},
	{name: "insert_negative", cmd: Command{Command: "insert", Path: "/memories/notes.md", InsertLine: -1, InsertText: "x"},
		want: errResult("Invalid `insert_line` parameter: -1. It should be within the range [0, 3].")},

	{name: "delete_file", cmd: Command{Command: "delete", Path: "/memories/notes.md"},
		want: ok("Successfully deleted /memories/notes.md"), after: map[string]string{"/memories/notes.md": ""}},
	{name: "delete_dir", cmd: Command{Command: "delete", Path: "/memories/proj"},
		want: ok("Successfully deleted /memories/proj"),
		after: map[string]string{"/memories/proj/plan.md": "", "/memories/proj/deep/more.md": "", "/memories/proj/deep/x/y.md": "", "/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "delete_root", cmd: Command{Command: "delete", Path: "/memories"},
		want: errResult("Cannot delete the /memories directory itself"), after: map[string]string{"/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "delete_root_slash", cmd: Command{Command: "delete", Path: "/memories/"},
		want: errResult("Cannot delete the /memories directory itself")},
	{name: "delete_missing", cmd: Command{Command: "delete", Path: "/memories/nope.md"},
		want: errResult("The path /memories/nope.md does not exist")},

	{name: "rename_file", cmd: Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/memories/archive/notes.md"},
		want: ok("Successfully renamed /memories/notes.md to /memories/archive/notes.md"),
		after: map[string]string{"/memories/notes.md": "", "/memories/archive/notes.md": seed["/memories/notes.md"]}},
	{name: "rename_dir", cmd: Command{Command: "rename", OldPath: "/memories/proj", NewPath: "/memories/old"},
		want: ok("Successfully renamed /memories/proj to /memories/old"),
		after: map[string]string{"/memories/proj/plan.md": "", "/memories/old/plan.md": "step one\n", "/memories/old/deep/x/y.md": "hidden by depth\n"}},
	{name: "rename_exists", cmd: Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/memories/dup.md"},
		want: errResult("The destination /memories/dup.md already exists"), after: map[string]string{"/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "rename_missing", cmd: Command{Command: "rename", OldPath: "/memories/nope.md", NewPath: "/memories/n2.md"},
		want: errResult("The path /memories/nope.md does not exist")},
	{name: "rename_root", cmd: Command{Command: "rename", OldPath: "/memories", NewPath: "/memories/x"},
		want: errResult("Cannot rename the /memories directory itself")},
	{name: "rename_into_itself", cmd: Command{Command: "rename", OldPath: "/memories/proj", NewPath: "/memories/proj/sub"},
		want: errResult("Cannot move /memories/proj into itself")},
	{name: "rename_outside", cmd: Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/tmp/notes.md"},
		want: errResult("Path must start with /memories, got: /tmp/notes.md")},

	{name: "unknown", cmd: Command{Command: "undo", Path: "/memories"}, want: errResult("Unknown command: undo")},
}

// seedStore writes seed for namespace ns.
func seedStore(t *testing.T, tl *Tool, ns string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		r := exec(t, tl, ns, "seed "+p, Command{Command: "create", Path: p, FileText: c})
		if r.IsError {
			t.Fatalf("seed %s: %s", p, r.Text)
		}
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cmdCases {
				t.Run(c.name, func(t *testing.T) {
					s := store.New(b.open(t), nil)
					defer s.Close()
					tl := newTool(t, s)
					seedStore(t, tl, "alice", seed)
					got := exec(t, tl, "alice", "call-1", c.cmd)
					if got != c.want {
						t.Fatalf("result\n got %+v\nwant %+v", got, c.want)
					}
					for p, want := range c.after {
						f, _ := s.Read(t.Context(), "alice"+p, 1<<20)
						gotC := ""
						if f != nil {
							gotC = f.Content
						}
						if gotC != want {
							t.Errorf("%s = %q, want %q", p, gotC, want)
						}
					}
					// The same call again is a replay: the same result, no change.
					before := files(t, s, "alice/memories/")
					again := exec(t, tl, "alice", "call-1", c.cmd)
					if again != got && !got.IsError {
						t.Fatalf("replay = %+v, want %+v", again, got)
					}
					if after := files(t, s, "alice/memories/"); dump(after) != dump(before) {
						t.Fatalf("replay changed the store:\n%s\nwas\n%s", dump(after), dump(before))
					}
					if j := files(t, s, "alice/"+journalFolder+"/"); len(j) != 0 {
						t.Fatalf("journals left: %v", j)
					}
				})
			}
		})
	}
}

func TestProgrammerErrors(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, nil); !errors.Is(err, ErrNoStore) {
		t.Fatalf("New(nil) = %v", err)
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
