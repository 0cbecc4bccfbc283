// Package textdiff computes line diffs of text and writes them as unified
// diffs (diff -u), for agentmem diff and the console, and merges two edits
// of one text line by line ([Merge], a diff3), for the console's conflict
// view.
//
// The edit script is a shortest one (Myers' O(ND) algorithm in linear
// space), within a bound on the work it does: past [MaxCost] steps the
// remaining changed regions are shown removed and added whole, still a
// correct diff that patch applies, only not the shortest, so that the
// cost of a diff of large, very different texts stays bounded.
package textdiff

import (
	"fmt"
	"strings"
)

// MaxCost bounds the steps of one diff's search for a shortest edit
// script (about a second of work at most); [Unified] of texts within it is
// always a shortest diff.
const MaxCost = 1 << 25

// Unified returns the unified diff (diff -u) from a to b under the
// headers "--- aName" and "+++ bName", with context unchanged lines
// around each change (a negative context counts as 0), or "" when a and
// b are equal. A last line without its newline is marked
// "\ No newline at end of file", as diff does.
func Unified(aName, bName, a, b string, context int) string {
	return unified(aName, bName, a, b, max(context, 0), MaxCost)
}

func unified(aName, bName, a, b string, context, budget int) string {
	al, bl := splitLines(a), splitLines(b)
	edits := diffLines(al, bl, budget)
	var changes []int
	for i, e := range edits {
		if e.op != ' ' {
			changes = append(changes, i)
		}
	}
	if len(changes) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	for i := 0; i < len(changes); {
		// A hunk runs from context lines before a change to context
		// lines after the last change that is at most 2*context unchanged
		// lines from the one before it.
		j := i
		for j+1 < len(changes) && changes[j+1]-changes[j]-1 <= 2*context {
			j++
		}
		start := max(0, changes[i]-context)
		end := min(len(edits), changes[j]+1+context)
		writeHunk(&sb, al, bl, edits[start:end])
		i = j + 1
	}
	return sb.String()
}

// splitLines splits s into lines, each with its "\n" except perhaps the
// last.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// edit is one step of an edit script: op is ' ' (keep a[ai], which is
// b[bi]), '-' (delete a[ai]) or '+' (insert b[bi]). ai and bi are the
// positions in a and b before the step.
type edit struct {
	op     byte
	ai, bi int
}

// diffLines returns an edit script from a to b, deletions before
// insertions within each change: Myers' O(ND) difference algorithm, in
// linear space (the middle-snake divide and conquer of his paper). The
// script is a shortest one while the search takes at most budget steps;
// past them, each region still to compare is deleted and inserted whole.
func diffLines(a, b []string, budget int) []edit {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(a), b: intern(b), del: make([]bool, len(a)), ins: make([]bool, len(b)), budget: budget}
	size := len(a) + len(b) + 3
	d.fwd, d.bwd = make([]int, size), make([]int, size)
	d.compare(0, len(a), 0, len(b))
	out := make([]edit, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && d.del[i]:
			out = append(out, edit{'-', i, j})
			i++
		case j < len(b) && d.ins[j]:
			out = append(out, edit{'+', i, j})
			j++
		default:
			out = append(out, edit{' ', i, j})
			i++
			j++
		}
	}
	return out
}

// differ holds the state of one diffLines.
type differ struct {
	a, b     []int  // the lines, as ids
	del, ins []bool // a's lines deleted, b's lines inserted
	// fwd and bwd are split's furthest-reaching x on each diagonal,
	// indexed by diagonal + len(b) of the subproblem + 1.
	fwd, bwd []int
	// budget is the steps (diagonals visited, snake moves) the search may
	// still take.
	budget int
}

// compare marks the lines of a[aLo:aHi] to delete and of b[bLo:bHi] to
// insert for a shortest edit script between them.
func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	for {
		for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
			aLo, bLo = aLo+1, bLo+1
		}
		for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
			aHi, bHi = aHi-1, bHi-1
		}
		switch {
		case aLo == aHi:
			for j := bLo; j < bHi; j++ {
				d.ins[j] = true
			}
			return
		case bLo == bHi:
			for i := aLo; i < aHi; i++ {
				d.del[i] = true
			}
			return
		}
		// Both sides are non-empty and differ at both ends, so the
		// distance is at least 2 and the split point is strictly inside:
		// both halves are smaller problems.
		x, y, ok := d.split(aLo, aHi, bLo, bHi)
		if !ok { // over budget: replace the region whole
			for i := aLo; i < aHi; i++ {
				d.del[i] = true
			}
			for j := bLo; j < bHi; j++ {
				d.ins[j] = true
			}
			return
		}
		d.compare(aLo, x, bLo, y)
		aLo, bLo = x, y
	}
}

// Sentinels of a diagonal that no path of the current length reaches.
const (
	noFwd = -1 << 40
	noBwd = 1 << 40
)

// split returns a point (x, y) through which a shortest edit path from
// (aLo, bLo) to (aHi, bHi) passes: the end of the forward snake where a
// forward search from the start and a backward search from the end first
// overlap. In the subproblem's coordinates a diagonal k is x - y, from -m
// to n; after d steps the forward search has reached diagonals -d, -d+2,
// …, d and the backward search delta-d, …, delta+d.
//
// It reports false, with no point, once the search has used up d's
// budget.
func (d *differ) split(aLo, aHi, bLo, bHi int) (int, int, bool) {
	a, b := d.a[aLo:aHi], d.b[bLo:bHi]
	n, m := len(a), len(b)
	delta := n - m
	odd := delta%2 != 0
	off := m + 1
	fwd, bwd := d.fwd, d.bwd
	// inRange reports whether diagonal k was computed at step s by the
	// search whose diagonals are centred on c.
	inRange := func(k, c, s int) bool { return s >= 0 && k >= c-s && k <= c+s && k >= -m && k <= n }
	for s := 0; ; s++ {
		// Each step of s is charged its diagonals and n+m for its
		// snakes: the O((N+M)D) bound of the search.
		d.budget -= 2*s + 2 + n + m
		if d.budget < 0 {
			return 0, 0, false
		}
		for k := -s; k <= s; k += 2 {
			if k < -m || k > n {
				continue
			}
			x := noFwd
			if s == 0 {
				x = 0
			} else {
				// From diagonal k-1 by deleting a[x]; from k+1 by inserting b[y].
				if inRange(k-1, 0, s-1) && fwd[off+k-1] >= 0 && fwd[off+k-1] < n {
					x = fwd[off+k-1] + 1
				}
				if inRange(k+1, 0, s-1) && fwd[off+k+1] >= 0 && fwd[off+k+1]-(k+1) < m && fwd[off+k+1] > x {
					x = fwd[off+k+1]
				}
			}
			if x == noFwd {
				fwd[off+k] = noFwd
				continue
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			fwd[off+k] = x
			if odd && inRange(k, delta, s-1) && bwd[off+k] != noBwd && bwd[off+k] <= x {
				return aLo + x, bLo + y, true
			}
		}
		for k := delta - s; k <= delta+s; k += 2 {
			if k < -m || k > n {
				continue
			}
			x := noBwd
			if s == 0 {
				x = n
			} else {
				// To diagonal k+1 by deleting a[x]; to k-1 by inserting b[y].
				if inRange(k+1, delta, s-1) && bwd[off+k+1] != noBwd && bwd[off+k+1] > 0 {
					x = bwd[off+k+1] - 1
				}
				if inRange(k-1, delta, s-1) && bwd[off+k-1] != noBwd && bwd[off+k-1]-(k-1) > 0 && bwd[off+k-1] < x {
					x = bwd[off+k-1]
				}
			}
			if x == noBwd {
				bwd[off+k] = noBwd
				continue
			}
			y := x - k
			for x > 0 && y > 0 && a[x-1] == b[y-1] {
				x, y = x-1, y-1
			}
			bwd[off+k] = x
			if !odd && inRange(k, 0, s) && fwd[off+k] != noFwd && fwd[off+k] >= x {
				return aLo + fwd[off+k], bLo + fwd[off+k] - k, true
			}
		}
	}
}

// writeHunk writes one hunk: its @@ header, then its lines.
func writeHunk(sb *strings.Builder, a, b []string, edits []edit) {
	na, nb := 0, 0
	for _, e := range edits {
		if e.op != '+' {
			na++
		}
		if e.op != '-' {
			nb++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(edits[0].ai, na), hunkRange(edits[0].bi, nb))
	for _, e := range edits {
		var line string
		if e.op == '+' {
			line = b[e.bi]
		} else {
			line = a[e.ai] // equal to b[e.bi] when kept
		}
		sb.WriteByte(e.op)
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's range as diff -u does: the first line
// (1-based) and the count, which is left out when 1; an empty range gives
// the line before it.
func hunkRange(first, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", first)
	case 1:
		return fmt.Sprint(first + 1)
	}
	return fmt.Sprintf("%d,%d", first+1, count)
}
