package textdiff

import (
	"slices"
	"strings"
	"testing"
)

// conflictText is the marked text of one overlap, as Merge writes it.
func conflictText(yours, theirs string) string {
	return MarkerYours + "\n" + yours + MarkerSplit + "\n" + theirs + MarkerTheirs + "\n"
}

// TestMerge checks the merge of the usual shapes: clean when the edits
// are apart or the same, a conflict when they overlap or touch.
func TestMerge(t *testing.T) {
	const base = "one\ntwo\nthree\nfour\nfive\n"
	for _, tc := range []struct {
		name, base, yours, theirs string
		want                      string
		conflicts                 []Conflict
	}{
		{name: "nothing changed", base: base, yours: base, theirs: base, want: base},
		{name: "only yours", base: base, yours: "one\nTWO\nthree\nfour\nfive\n", theirs: base, want: "one\nTWO\nthree\nfour\nfive\n"},
		{name: "only theirs", base: base, yours: base, theirs: "one\ntwo\nthree\nfour\n", want: "one\ntwo\nthree\nfour\n"},
		{name: "apart", base: base, yours: "ONE\ntwo\nthree\nfour\nfive\n", theirs: "one\ntwo\nthree\nFOUR\nfive\nsix\n",
			want: "ONE\ntwo\nthree\nFOUR\nfive\nsix\n"},
		{name: "one unchanged line between", base: base, yours: "one\nTWO\nthree\nfour\nfive\n", theirs: "one\ntwo\nthree\nFOUR\nfive\n",
			want: "one\nTWO\nthree\nFOUR\nfive\n"},
		{name: "insert at the top, append at the end", base: base, yours: "zero\n" + base, theirs: base + "six\n", want: "zero\n" + base + "six\n"},
		{name: "the same change on both", base: base, yours: "one\n2\nthree\nfour\nfive\n", theirs: "one\n2\nthree\nfour\nfive\n",
			want: "one\n2\nthree\nfour\nfive\n"},
		{name: "both change one line", base: base, yours: "one\nmine\nthree\nfour\nfive\n", theirs: "one\nhers\nthree\nfour\nfive\n",
			want:      "one\n" + conflictText("mine\n", "hers\n") + "three\nfour\nfive\n",
			conflicts: []Conflict{{Base: "two\n", Yours: "mine\n", Theirs: "hers\n", BaseLine: 2, Line: 2}}},
		{name: "touching lines conflict", base: base, yours: "one\nTWO\nthree\nfour\nfive\n", theirs: "one\ntwo\nTHREE\nfour\nfive\n",
			want:      "one\n" + conflictText("TWO\nthree\n", "two\nTHREE\n") + "four\nfive\n",
			conflicts: []Conflict{{Base: "two\nthree\n", Yours: "TWO\nthree\n", Theirs: "two\nTHREE\n", BaseLine: 2, Line: 2}}},
		{name: "touching lines conflict, theirs above", base: base, yours: "one\ntwo\nTHREE\nfour\nfive\n", theirs: "one\nTWO\nthree\nfour\nfive\n",
			want:      "one\n" + conflictText("two\nTHREE\n", "TWO\nthree\n") + "four\nfive\n",
			conflicts: []Conflict{{Base: "two\nthree\n", Yours: "two\nTHREE\n", Theirs: "TWO\nthree\n", BaseLine: 2, Line: 2}}},
		{name: "an insertion after a changed line conflicts", base: "a\nb\n", yours: "A\nb\n", theirs: "a\nnew\nb\n",
			want:      conflictText("A\n", "a\nnew\n") + "b\n",
			conflicts: []Conflict{{Base: "a\n", Yours: "A\n", Theirs: "a\nnew\n", BaseLine: 1, Line: 1}}},
		{name: "both insert at one place", base: "a\nb\n", yours: "a\nx\nb\n", theirs: "a\ny\nb\n",
			want:      "a\n" + conflictText("x\n", "y\n") + "b\n",
			conflicts: []Conflict{{Base: "", Yours: "x\n", Theirs: "y\n", BaseLine: 2, Line: 2}}},
		{name: "delete against an edit", base: base, yours: "one\nthree\nfour\nfive\n", theirs: "one\n2\nthree\nfour\nfive\n",
			want:      "one\n" + conflictText("", "2\n") + "three\nfour\nfive\n",
			conflicts: []Conflict{{Base: "two\n", Yours: "", Theirs: "2\n", BaseLine: 2, Line: 2}}},
		{name: "a clean edit kept beside a conflict", base: base, yours: "ONE\ntwo\nthree\nmine\nfive\n", theirs: "one\ntwo\nthree\nhers\nfive\n",
			want:      "ONE\ntwo\nthree\n" + conflictText("mine\n", "hers\n") + "five\n",
			conflicts: []Conflict{{Base: "four\n", Yours: "mine\n", Theirs: "hers\n", BaseLine: 4, Line: 4}}},
		{name: "two conflicts", base: base, yours: "1\ntwo\nthree\nfour\n5\n", theirs: "uno\ntwo\nthree\nfour\ncinco\n",
			want: conflictText("1\n", "uno\n") + "two\nthree\nfour\n" + conflictText("5\n", "cinco\n"),
			conflicts: []Conflict{{Base: "one\n", Yours: "1\n", Theirs: "uno\n", BaseLine: 1, Line: 1},
				{Base: "five\n", Yours: "5\n", Theirs: "cinco\n", BaseLine: 5, Line: 9}}},
		{name: "no final newline", base: "a\nb", yours: "a\nmine", theirs: "a\nhers",
			want:      "a\n" + conflictText("mine\n", "hers\n"),
			conflicts: []Conflict{{Base: "b", Yours: "mine", Theirs: "hers", BaseLine: 2, Line: 2}}},
		{name: "no final newline, apart", base: "a\nb\nc", yours: "A\nb\nc", theirs: "a\nb\nc\n", want: "A\nb\nc\n"},
		{name: "both create", base: "", yours: "mine\n", theirs: "hers\n",
			want: conflictText("mine\n", "hers\n"), conflicts: []Conflict{{Yours: "mine\n", Theirs: "hers\n", BaseLine: 1, Line: 1}}},
		{name: "yours empties it, theirs kept it", base: base, yours: "", theirs: base, want: ""},
		{name: "yours empties it, theirs changed it", base: "a\nb\n", yours: "", theirs: "a\nB\n",
			want: conflictText("", "a\nB\n"), conflicts: []Conflict{{Base: "a\nb\n", Theirs: "a\nB\n", BaseLine: 1, Line: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(tc.base, tc.yours, tc.theirs)
			if got.Text != tc.want {
				t.Errorf("Text =\n%s\nwant\n%s", got.Text, tc.want)
			}
			if !slices.Equal(got.Conflicts, tc.conflicts) {
				t.Errorf("Conflicts = %+v\nwant %+v", got.Conflicts, tc.conflicts)
			}
			if n := CountConflicts(got.Text); n != len(tc.conflicts) {
				t.Errorf("CountConflicts(Text) = %d, want %d", n, len(tc.conflicts))
			}
		})
	}
}

// TestCountConflicts checks that only whole runs of the three markers
// count.
func TestCountConflicts(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"plain\ntext\n", 0},
		{conflictText("a\n", "b\n"), 1},
		{"x\n" + conflictText("", "") + "y\n" + conflictText("a\n", "b\n"), 2},
		{strings.TrimSuffix(conflictText("a\n", "b\n"), "\n"), 1},   // the last marker ends the text
		{MarkerYours + "\n" + MarkerSplit + "\n" + "resolved\n", 0}, // the closing marker was deleted
		{MarkerSplit + "\n" + MarkerTheirs + "\n", 0},
		{MarkerYours + "\nstray\n" + conflictText("a\n", "b\n"), 1},
		{"  " + MarkerYours + "\n" + MarkerSplit + "\n" + MarkerTheirs + "\n", 0}, // markers start their line
	} {
		if got := CountConflicts(tc.text); got != tc.want {
			t.Errorf("CountConflicts(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// checkMerge fails t unless Merge(base, yours, theirs) is want, clean.
func checkMerge(t *testing.T, what, base, yours, theirs, want string) {
	t.Helper()
	if m := Merge(base, yours, theirs); m.Text != want || len(m.Conflicts) != 0 {
		t.Fatalf("%s: Merge(%q, %q, %q) = %q with %d conflicts, want %q clean", what, base, yours, theirs, m.Text, len(m.Conflicts), want)
	}
}

// separator is a line none of the fuzzed texts holds: an unchanged line
// that keeps an edit above it apart from one below it.
const separator = "\x00separator\n"

// endLine ends a non-empty s with a newline, so that what follows it
// starts a line.
func endLine(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// FuzzMerge checks Merge's properties: merging an unchanged side gives
// the other side, the same edit on both gives it once, edits kept apart
// by an unchanged line are both kept (whichever side is which), a clean
// merge does not depend on which side is yours, and each conflict's Line
// is its opening marker.
func FuzzMerge(f *testing.F) {
	f.Add("one\ntwo\nthree\n", "one\nTWO\nthree\n", "", "four\n")
	f.Add("a\nb\nc\na\nb\n", "b\na\n", "c\nc\n", "a\nb")
	f.Add("", "x", "y\n", "")
	f.Add("- likes tea\n", "- likes coffee\n- lives in Hanoi\n", "- likes tea\n", "x\n\n")
	f.Fuzz(func(t *testing.T, base, x, y, below string) {
		if strings.Contains(base+x+y+below, "\x00") {
			return
		}
		checkMerge(t, "an unchanged yours", base, base, x, x)
		checkMerge(t, "an unchanged theirs", base, x, base, x)
		checkMerge(t, "the same edit", base, x, x, x)
		// base = top + separator + below; yours edits the top (to x),
		// theirs the bottom (to y).
		top, bottom := endLine(base), below
		b, yours, theirs := top+separator+bottom, endLine(x)+separator+bottom, top+separator+y
		want := endLine(x) + separator + y
		checkMerge(t, "edits apart", b, yours, theirs, want)
		checkMerge(t, "edits apart, sides swapped", b, theirs, yours, want)

		m, swapped := Merge(base, x, y), Merge(base, y, x)
		if len(m.Conflicts) != len(swapped.Conflicts) || len(m.Conflicts) == 0 && m.Text != swapped.Text {
			t.Fatalf("Merge(%q, %q, %q) = %+v, with the sides swapped %+v", base, x, y, m, swapped)
		}
		marked := strings.Contains(base+x+y, MarkerYours) || strings.Contains(base+x+y, MarkerSplit) || strings.Contains(base+x+y, MarkerTheirs)
		if n := CountConflicts(m.Text); n != len(m.Conflicts) && !marked {
			t.Fatalf("Merge(%q, %q, %q): CountConflicts = %d of %d conflicts", base, x, y, n, len(m.Conflicts))
		}
		lines := splitLines(m.Text)
		for _, c := range m.Conflicts {
			if c.Line < 1 || c.Line > len(lines) || lines[c.Line-1] != MarkerYours+"\n" {
				t.Fatalf("Merge(%q, %q, %q): conflict %+v does not start at its line in %q", base, x, y, c, m.Text)
			}
		}
	})
}
