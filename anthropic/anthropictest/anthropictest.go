// Package anthropictest runs the table of every memory tool command and
// error string on any driver, so that each backend module (and the e2e
// module, on all of them) can check the tool without this module
// requiring any backend.
package anthropictest

import (
	"sort"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/anthropic"
	"github.com/agentmem/agentmem/core/driver"
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
	"/memories/café notes.md":     "crème\n",
	"/memories/node_modules/x.md": "n",
}

// cmdCase is one command of the table, run on a freshly seeded store.
type cmdCase struct {
	name string
	cmd  anthropic.Command
	want anthropic.Result
	// after lists model paths whose content must be as given ("" = absent).
	after map[string]string
	// opts are the Tool's options (nil = defaults).
	opts *anthropic.Options
}

// ok is an accepted command's result.
func ok(s string) anthropic.Result { return anthropic.Result{Text: s} }

// errResult is a refused command's result.
func errResult(s string) anthropic.Result { return anthropic.Result{Text: s, IsError: true} }

// cmdCases is every command and error string of the memory tool.
var cmdCases = []cmdCase{
	{name: "view_root", cmd: anthropic.Command{Command: "view", Path: "/memories"}, want: ok(
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"4.0K\t/memories\n" +
			"1.5K\t/memories/big.md\n" +
			"7B\t/memories/café notes.md\n" +
			"7B\t/memories/dup.md\n" +
			"17B\t/memories/notes.md\n" +
			"4.0K\t/memories/proj/\n" +
			"4.0K\t/memories/proj/deep/\n" +
			"9B\t/memories/proj/plan.md")},
	{name: "view_dir", cmd: anthropic.Command{Command: "view", Path: "/memories/proj"}, want: ok(
		"Here're the files and directories up to 2 levels deep in /memories/proj, excluding hidden items and node_modules:\n" +
			"4.0K\t/memories/proj\n" +
			"4.0K\t/memories/proj/deep/\n" +
			"7B\t/memories/proj/deep/more.md\n" +
			"4.0K\t/memories/proj/deep/x/\n" +
			"9B\t/memories/proj/plan.md")},
	{name: "view_dir_slash", cmd: anthropic.Command{Command: "view", Path: "/memories/proj/"}, want: ok(
		"Here're the files and directories up to 2 levels deep in /memories/proj/, excluding hidden items and node_modules:\n" +
			"4.0K\t/memories/proj/\n" +
			"4.0K\t/memories/proj/deep/\n" +
			"7B\t/memories/proj/deep/more.md\n" +
			"4.0K\t/memories/proj/deep/x/\n" +
			"9B\t/memories/proj/plan.md")},
	{name: "view_file", cmd: anthropic.Command{Command: "view", Path: "/memories/notes.md"}, want: ok(
		"Here's the content of /memories/notes.md with line numbers:\n     1\talpha\n     2\tbeta\n     3\tgamma\n     4\t")},
	{name: "view_range", cmd: anthropic.Command{Command: "view", Path: "/memories/notes.md", ViewRange: []int64{2, 3}}, want: ok(
		"Here's the content of /memories/notes.md with line numbers:\n     2\tbeta\n     3\tgamma")},
	{name: "view_range_to_end", cmd: anthropic.Command{Command: "view", Path: "/memories/notes.md", ViewRange: []int64{3, -1}}, want: ok(
		"Here's the content of /memories/notes.md with line numbers:\n     3\tgamma\n     4\t")},
	{name: "view_missing", cmd: anthropic.Command{Command: "view", Path: "/memories/nope.md"},
		want: errResult("The path /memories/nope.md does not exist. Please provide a valid path.")},
	{name: "view_outside", cmd: anthropic.Command{Command: "view", Path: "/etc/passwd"},
		want: errResult("Path must start with /memories, got: /etc/passwd")},
	{name: "view_traversal", cmd: anthropic.Command{Command: "view", Path: "/memories/../etc"},
		want: errResult("Path /memories/../etc would escape /memories directory")},
	{name: "view_backslash_traversal", cmd: anthropic.Command{Command: "view", Path: `/memories/..\etc`},
		want: errResult(`Path /memories/..\etc would escape /memories directory`)},
	{name: "view_encoded_traversal", cmd: anthropic.Command{Command: "view", Path: "/memories/%2e%2e%2fetc"},
		want: errResult("Path /memories/%2e%2e%2fetc would escape /memories directory")},
	// A file longer than MaxFileChars is listed with its whole size.
	{name: "view_root_long_file", cmd: anthropic.Command{Command: "view", Path: "/memories"}, opts: &anthropic.Options{MaxFileChars: 1000}, want: ok(
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"4.0K\t/memories\n" +
			"1.5K\t/memories/big.md\n" +
			"7B\t/memories/café notes.md\n" +
			"7B\t/memories/dup.md\n" +
			"17B\t/memories/notes.md\n" +
			"4.0K\t/memories/proj/\n" +
			"4.0K\t/memories/proj/deep/\n" +
			"9B\t/memories/proj/plan.md")},
	// Any name a file system takes works: spaces, letters outside ASCII.
	{name: "view_spaced_name", cmd: anthropic.Command{Command: "view", Path: "/memories/café notes.md"}, want: ok(
		"Here's the content of /memories/café notes.md with line numbers:\n     1\tcrème\n     2\t")},
	{name: "view_spaced_missing", cmd: anthropic.Command{Command: "view", Path: "/memories/a b.md"},
		want: errResult("The path /memories/a b.md does not exist. Please provide a valid path.")},
	{name: "view_not_utf8", cmd: anthropic.Command{Command: "view", Path: "/memories/\xff.md"},
		want: errResult("The path /memories/\xff.md is not a valid memory path: it is not valid UTF-8.")},
	{name: "view_name_too_long", cmd: anthropic.Command{Command: "view", Path: "/memories/" + strings.Repeat("é", 67)},
		want: errResult("The path /memories/" + strings.Repeat("é", 67) + " is not a valid memory path: the name " +
			strings.Repeat("é", 67) + " is too long (stored, it takes 203 characters, at most 200 are allowed); use a shorter name.")},

	{name: "create", cmd: anthropic.Command{Command: "create", Path: "/memories/new/n.md", FileText: "hello\n"},
		want: ok("File created successfully at: /memories/new/n.md"), after: map[string]string{"/memories/new/n.md": "hello\n"}},
	{name: "create_unicode", cmd: anthropic.Command{Command: "create", Path: "/memories/日本 語/naïve ☕.md", FileText: "é\n"},
		want: ok("File created successfully at: /memories/日本 語/naïve ☕.md"), after: map[string]string{"/memories/日本 語/naïve ☕.md": "é\n"}},
	{name: "create_longest_name", cmd: anthropic.Command{Command: "create", Path: "/memories/" + strings.Repeat("é", 66), FileText: "x"},
		want: ok("File created successfully at: /memories/" + strings.Repeat("é", 66)), after: map[string]string{"/memories/" + strings.Repeat("é", 66): "x"}},
	// The stored spelling of "café notes.md", written as a name, is another file.
	{name: "create_encoded_spelling", cmd: anthropic.Command{Command: "create", Path: "/memories/--caf-e9-20notes.md", FileText: "x"},
		want:  ok("File created successfully at: /memories/--caf-e9-20notes.md"),
		after: map[string]string{"/memories/--caf-e9-20notes.md": "x", "/memories/café notes.md": "crème\n"}},
	{name: "create_exists_unicode", cmd: anthropic.Command{Command: "create", Path: "/memories/café notes.md", FileText: "x"},
		want: errResult("File /memories/café notes.md already exists"), after: map[string]string{"/memories/café notes.md": "crème\n"}},
	{name: "create_exists", cmd: anthropic.Command{Command: "create", Path: "/memories/notes.md", FileText: "x"},
		want: errResult("File /memories/notes.md already exists"), after: map[string]string{"/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "create_over_dir", cmd: anthropic.Command{Command: "create", Path: "/memories/proj", FileText: "x"},
		want: errResult("File /memories/proj already exists")},
	{name: "create_under_file", cmd: anthropic.Command{Command: "create", Path: "/memories/notes.md/x.md", FileText: "x"},
		want: errResult("The path /memories/notes.md is a file, not a directory."), after: map[string]string{"/memories/notes.md/x.md": ""}},

	{name: "str_replace", cmd: anthropic.Command{Command: "str_replace", Path: "/memories/notes.md", OldStr: "beta", NewStr: "BETA"},
		want: ok("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
			"     1\talpha\n     2\tBETA\n     3\tgamma\n     4\t"),
		after: map[string]string{"/memories/notes.md": "alpha\nBETA\ngamma\n"}},
	{name: "str_replace_missing", cmd: anthropic.Command{Command: "str_replace", Path: "/memories/notes.md", OldStr: "delta", NewStr: "x"},
		want: errResult("No replacement was performed, old_str `delta` did not appear verbatim in /memories/notes.md.")},
	{name: "str_replace_multiple", cmd: anthropic.Command{Command: "str_replace", Path: "/memories/dup.md", OldStr: "x", NewStr: "z"},
		want:  errResult("No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2, 3. Please ensure it is unique"),
		after: map[string]string{"/memories/dup.md": seed["/memories/dup.md"]}},
	{name: "str_replace_no_file", cmd: anthropic.Command{Command: "str_replace", Path: "/memories/nope.md", OldStr: "a", NewStr: "b"},
		want: errResult("The path /memories/nope.md does not exist. Please provide a valid path.")},
	{name: "str_replace_dir", cmd: anthropic.Command{Command: "str_replace", Path: "/memories/proj", OldStr: "a", NewStr: "b"},
		want: errResult("The path /memories/proj is not a file.")},

	{name: "insert", cmd: anthropic.Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 1, InsertText: "inserted\n"},
		want: ok("The file /memories/notes.md has been edited."), after: map[string]string{"/memories/notes.md": "alpha\ninserted\nbeta\ngamma\n"}},
	{name: "insert_end", cmd: anthropic.Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 3, InsertText: "last"},
		want: ok("The file /memories/notes.md has been edited."), after: map[string]string{"/memories/notes.md": "alpha\nbeta\ngamma\nlast\n"}},
	{name: "insert_bad_line", cmd: anthropic.Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 4, InsertText: "x"},
		want: errResult("Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]")},
	{name: "insert_negative", cmd: anthropic.Command{Command: "insert", Path: "/memories/notes.md", InsertLine: -1, InsertText: "x"},
		want: errResult("Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 3]")},
	{name: "insert_unicode", cmd: anthropic.Command{Command: "insert", Path: "/memories/café notes.md", InsertLine: 0, InsertText: "thé"},
		want: ok("The file /memories/café notes.md has been edited."), after: map[string]string{"/memories/café notes.md": "thé\ncrème\n"}},

	{name: "delete_file", cmd: anthropic.Command{Command: "delete", Path: "/memories/notes.md"},
		want: ok("Successfully deleted /memories/notes.md"), after: map[string]string{"/memories/notes.md": ""}},
	{name: "delete_dir", cmd: anthropic.Command{Command: "delete", Path: "/memories/proj"},
		want:  ok("Successfully deleted /memories/proj"),
		after: map[string]string{"/memories/proj/plan.md": "", "/memories/proj/deep/more.md": "", "/memories/proj/deep/x/y.md": "", "/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "delete_root", cmd: anthropic.Command{Command: "delete", Path: "/memories"},
		want: errResult("Cannot delete the /memories directory itself"), after: map[string]string{"/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "delete_root_slash", cmd: anthropic.Command{Command: "delete", Path: "/memories/"},
		want: errResult("Cannot delete the /memories directory itself")},
	{name: "delete_missing", cmd: anthropic.Command{Command: "delete", Path: "/memories/nope.md"},
		want: errResult("The path /memories/nope.md does not exist")},

	{name: "rename_file", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/memories/archive/notes.md"},
		want:  ok("Successfully renamed /memories/notes.md to /memories/archive/notes.md"),
		after: map[string]string{"/memories/notes.md": "", "/memories/archive/notes.md": seed["/memories/notes.md"]}},
	{name: "rename_dir", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/proj", NewPath: "/memories/old"},
		want:  ok("Successfully renamed /memories/proj to /memories/old"),
		after: map[string]string{"/memories/proj/plan.md": "", "/memories/old/plan.md": "step one\n", "/memories/old/deep/x/y.md": "hidden by depth\n"}},
	{name: "rename_unicode", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/café notes.md", NewPath: "/memories/archive/vieux café.md"},
		want:  ok("Successfully renamed /memories/café notes.md to /memories/archive/vieux café.md"),
		after: map[string]string{"/memories/café notes.md": "", "/memories/archive/vieux café.md": "crème\n"}},
	{name: "rename_exists", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/memories/dup.md"},
		want: errResult("The destination /memories/dup.md already exists"), after: map[string]string{"/memories/notes.md": seed["/memories/notes.md"]}},
	{name: "rename_missing", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/nope.md", NewPath: "/memories/n2.md"},
		want: errResult("The path /memories/nope.md does not exist")},
	{name: "rename_root", cmd: anthropic.Command{Command: "rename", OldPath: "/memories", NewPath: "/memories/x"},
		want: errResult("Cannot rename the /memories directory itself")},
	{name: "rename_into_itself", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/proj", NewPath: "/memories/proj/sub"},
		want: errResult("Cannot move /memories/proj into itself")},
	{name: "rename_outside", cmd: anthropic.Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/tmp/notes.md"},
		want: errResult("Path must start with /memories, got: /tmp/notes.md")},

	{name: "unknown", cmd: anthropic.Command{Command: "undo", Path: "/memories"}, want: errResult("Unknown command: undo")},
}

// Commands runs every case of the command table, each as a subtest on a
// fresh driver from open (the store over it closes it): it seeds namespace
// "alice", executes the command, and checks the result text, the files
// after, that the same call again is a replay (the same result, no change
// to the files), and that nothing but memory files is left under the
// namespace (no journals).
func Commands(t *testing.T, open func(t *testing.T) driver.Driver) {
	t.Helper()
	for _, c := range cmdCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := store.New(open(t), nil)
			defer s.Close()
			tl, err := anthropic.New(s, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			for p, content := range seed {
				if r := execute(t, tl, "seed "+p, anthropic.Command{Command: "create", Path: p, FileText: content}); r.IsError {
					t.Fatalf("seed %s: %s", p, r.Text)
				}
			}
			got := execute(t, tl, "call-1", c.cmd)
			if got != c.want {
				t.Fatalf("result\n got %+v\nwant %+v", got, c.want)
			}
			for p, want := range c.after {
				sp, err := anthropic.StorePath("alice", p)
				if err != nil {
					t.Fatal(err)
				}
				f, err := s.Read(t.Context(), sp, 1<<20)
				gotC := ""
				if err == nil && f != nil {
					gotC = f.Content
				}
				if gotC != want {
					t.Errorf("%s = %q, want %q", p, gotC, want)
				}
			}
			// The same call again is a replay: the same result, no change.
			before := files(t, s, "alice/memories/")
			again := execute(t, tl, "call-1", c.cmd)
			if again != got && !got.IsError {
				t.Fatalf("replay = %+v, want %+v", again, got)
			}
			if after := files(t, s, "alice/memories/"); dump(after) != dump(before) {
				t.Fatalf("replay changed the store:\n%s\nwas\n%s", dump(after), dump(before))
			}
			// Only memory files are left: no journal of either call.
			for p := range files(t, s, "alice/") {
				if !strings.HasPrefix(p, "alice/memories/") {
					t.Fatalf("left behind: %s", p)
				}
			}
		})
	}
}

// execute runs c for namespace "alice" as tool call id.
func execute(t *testing.T, tl *anthropic.Tool, id string, c anthropic.Command) anthropic.Result {
	t.Helper()
	r, err := tl.Execute(t.Context(), "alice", id, c)
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	return r
}

// files returns every store file below prefix, path → content.
func files(t *testing.T, s *store.Store, prefix string) map[string]string {
	t.Helper()
	ps, err := s.ListPaths(t.Context(), prefix, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		f, err := s.Read(t.Context(), p, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = f.Content
	}
	return out
}

// dump renders files sorted by path, one "path = content" line each.
func dump(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		b.WriteString(k + " = " + m[k] + "\n")
	}
	return b.String()
}
