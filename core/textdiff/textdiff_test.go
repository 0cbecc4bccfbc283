package textdiff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// lcsLen is the length of a longest common subsequence of a and b, by the
// quadratic table: the reference for diffLines.
func lcsLen(a, b []string) int {
	row := make([]int, len(b)+1)
	for i := range a {
		prev := 0 // row[j] of the previous i
		for j := range b {
			cur := row[j+1]
			if a[i] == b[j] {
				row[j+1] = prev + 1
			} else if row[j] > row[j+1] {
				row[j+1] = row[j]
			}
			prev = cur
		}
	}
	return row[len(b)]
}

// checkScript fails t unless edits turn a into b with the fewest
// insertions and deletions, each op naming the right positions.
func checkScript(t *testing.T, a, b []string, edits []edit) {
	t.Helper()
	var got []string
	i, j, changes := 0, 0, 0
	for _, e := range edits {
		if e.ai != i || e.bi != j {
			t.Fatalf("a=%q b=%q: edit %c at (%d,%d), want (%d,%d)", a, b, e.op, e.ai, e.bi, i, j)
		}
		switch e.op {
		case ' ':
			if a[i] != b[j] {
				t.Fatalf("a=%q b=%q: kept a[%d]=%q as b[%d]=%q", a, b, i, a[i], j, b[j])
			}
			got = append(got, a[i])
			i, j = i+1, j+1
		case '-':
			i++
			changes++
		case '+':
			got = append(got, b[j])
			j++
			changes++
		}
	}
	if i != len(a) || j != len(b) || strings.Join(got, "") != strings.Join(b, "") {
		t.Fatalf("a=%q b=%q: the script ends at (%d,%d) with %q", a, b, i, j, got)
	}
	if want := len(a) + len(b) - 2*lcsLen(a, b); changes != want {
		t.Fatalf("a=%q b=%q: %d changes, want the minimum %d: %v", a, b, changes, want, edits)
	}
}

// TestDiffLinesShortest checks diffLines against the LCS table on random
// pairs over small alphabets (many repeated lines, the hard case for the
// middle snake) and on edge cases.
func TestDiffLinesShortest(t *testing.T) {
	cases := [][2][]string{
		{nil, nil},
		{nil, {"x"}},
		{{"x"}, nil},
		{{"x"}, {"y"}},
		{{"a", "b", "c"}, {"a", "b", "c"}},
		{{"a", "b", "c", "a", "b", "b", "a"}, {"c", "b", "a", "b", "a", "c"}}, // the paper's example
	}
	for _, c := range cases {
		checkScript(t, c[0], c[1], diffLines(c[0], c[1], MaxCost))
	}
	r := rand.New(rand.NewPCG(1, 2))
	gen := func(n, alphabet int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + r.IntN(alphabet)))
		}
		return out
	}
	for range 3000 {
		alphabet := 1 + r.IntN(5)
		a, b := gen(r.IntN(40), alphabet), gen(r.IntN(40), alphabet)
		checkScript(t, a, b, diffLines(a, b, MaxCost))
	}
	// A long file with a few scattered edits.
	a := gen(3000, 50)
	b := append([]string(nil), a...)
	for range 20 {
		k := r.IntN(len(b))
		b = append(b[:k], append([]string{"new"}, b[k+1:]...)...)
	}
	checkScript(t, a, b, diffLines(a, b, MaxCost))
}

// TestUnified checks the output of diff -u for the usual shapes.
func TestUnified(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var sb strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				sb.WriteString(s)
				continue
			}
			sb.WriteString("line " + string(rune('0'+i/10)) + string(rune('0'+i%10)) + "\n")
		}
		return sb.String()
	}
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"equal", "x\ny\n", "x\ny\n", ""},
		{"create", "", "a\nb\n", "--- A\n+++ B\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"delete", "a\n", "", "--- A\n+++ B\n@@ -1 +0,0 @@\n-a\n"},
		{"middle", lines(10, nil), lines(10, map[int]string{5: "five\n"}),
			"--- A\n+++ B\n@@ -2,7 +2,7 @@\n line 02\n line 03\n line 04\n-line 05\n+five\n line 06\n line 07\n line 08\n"},
		{"two hunks", lines(20, nil), lines(20, map[int]string{2: "", 18: "x\n"}),
			"--- A\n+++ B\n@@ -1,5 +1,4 @@\n line 01\n-line 02\n line 03\n line 04\n line 05\n" +
				"@@ -15,6 +14,6 @@\n line 15\n line 16\n line 17\n-line 18\n+x\n line 19\n line 20\n"},
		{"joined hunks", lines(12, nil), lines(12, map[int]string{2: "two\n", 9: "nine\n"}),
			"--- A\n+++ B\n@@ -1,12 +1,12 @@\n line 01\n-line 02\n+two\n line 03\n line 04\n line 05\n line 06\n line 07\n line 08\n-line 09\n+nine\n line 10\n line 11\n line 12\n"},
		{"insert after", "a\n", "a\nb\n", "--- A\n+++ B\n@@ -1 +1,2 @@\n a\n+b\n"},
		{"no newline", "a\nb", "a\nb\n", "--- A\n+++ B\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"no newline kept", "a\nz", "b\nz", "--- A\n+++ B\n@@ -1,2 +1,2 @@\n-a\n+b\n z\n\\ No newline at end of file\n"},
		{"no newline both", "one\ntwo", "one\nthree", "--- A\n+++ B\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+three\n\\ No newline at end of file\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unified("A", "B", tc.a, tc.b, 3); got != tc.want {
				t.Errorf("Unified =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestContext checks the context parameter: 0 shows only the changes,
// a negative one counts as 0, a larger one joins hunks.
func TestContext(t *testing.T) {
	a, b := "1\n2\n3\n4\n5\n", "1\nX\n3\n4\nY\n"
	if got, want := Unified("A", "B", a, b, 0), "--- A\n+++ B\n@@ -2 +2 @@\n-2\n+X\n@@ -5 +5 @@\n-5\n+Y\n"; got != want {
		t.Errorf("context 0:\n%s\nwant\n%s", got, want)
	}
	if Unified("A", "B", a, b, -1) != Unified("A", "B", a, b, 0) {
		t.Error("a negative context differs from 0")
	}
	if got, want := Unified("A", "B", a, b, 1), "--- A\n+++ B\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n-5\n+Y\n"; got != want {
		t.Errorf("context 1:\n%s\nwant\n%s", got, want)
	}
}

// TestBudget checks that past its budget the search still gives a
// correct script (rebuilding a and b), only longer than the shortest,
// and that the default budget covers a large, very different pair.
func TestBudget(t *testing.T) {
	var a, b []string
	for i := range 400 {
		a = append(a, fmt.Sprintf("a%d\n", i%7))
		b = append(b, fmt.Sprintf("a%d\n", i%5))
	}
	exact := diffLines(a, b, MaxCost)
	checkScript(t, a, b, exact)
	cut := diffLines(a, b, 5000)
	var ra, rb []string
	changes := 0
	for _, e := range cut {
		switch e.op {
		case ' ':
			ra, rb = append(ra, a[e.ai]), append(rb, b[e.bi])
		case '-':
			ra = append(ra, a[e.ai])
			changes++
		case '+':
			rb = append(rb, b[e.bi])
			changes++
		}
	}
	if strings.Join(ra, "") != strings.Join(a, "") || strings.Join(rb, "") != strings.Join(b, "") {
		t.Fatal("the script cut by the budget does not rebuild a and b")
	}
	if min := len(a) + len(b) - 2*lcsLen(a, b); changes <= min {
		t.Fatalf("the cut script has %d changes, the shortest %d: the budget did not bind", changes, min)
	}
}
