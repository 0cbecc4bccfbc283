package console

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// maxDiffEdits bounds the edit distance searched for a shortest diff;
// beyond it the changed middle is shown as removed and added whole
// (still a correct diff, only not the shortest), so a request's cost
// stays bounded.
const maxDiffEdits = 1000

// unifiedDiff is the unified diff (diff -u) from a to b under the headers
// aName and bName, "" when they are equal.
func unifiedDiff(aName, bName, a, b string) string {
	al, bl := lines(a), lines(b)
	ops := diffOps(al, bl)
	var changed []int
	for i, o := range ops {
		if o.op != ' ' {
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	for i := 0; i < len(changed); {
		j := i
		for j+1 < len(changed) && changed[j+1]-changed[j]-1 <= 2*diffContext {
			j++
		}
		hunk := ops[max(0, changed[i]-diffContext):min(len(ops), changed[j]+1+diffContext)]
		na, nb := 0, 0
		for _, o := range hunk {
			if o.op != '+' {
				na++
			}
			if o.op != '-' {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(hunk[0].a, na), hunkRange(hunk[0].b, nb))
		for _, o := range hunk {
			sb.WriteByte(o.op)
			sb.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = j + 1
	}
	return sb.String()
}

func hunkRange(first, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", first)
	case 1:
		return fmt.Sprint(first + 1)
	}
	return fmt.Sprintf("%d,%d", first+1, n)
}

// lines splits s after each "\n".
func lines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		out, s = append(out, s[:i]), s[i:]
	}
	return out
}

// diffOp is one line of an edit script: ' ' kept, '-' removed from a,
// '+' added from b; a and b are the line positions before it.
type diffOp struct {
	op   byte
	line string
	a, b int
}

// diffOps is an edit script from a to b: the common head and tail kept,
// the middle by Myers' greedy shortest-edit search (up to maxDiffEdits
// edits), removals before additions.
func diffOps(a, b []string) []diffOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var out []diffOp
	for i := range head {
		out = append(out, diffOp{' ', a[i], i, i})
	}
	out = append(out, middle(a[head:len(a)-tail], b[head:len(b)-tail], head, head)...)
	for k := range tail {
		i, j := len(a)-tail+k, len(b)-tail+k
		out = append(out, diffOp{' ', a[i], i, j})
	}
	return out
}

// middle diffs a and b, whose first lines are at a0 and b0.
func middle(a, b []string, a0, b0 int) []diffOp {
	n, m := len(a), len(b)
	whole := func() []diffOp {
		var out []diffOp
		for i, l := range a {
			out = append(out, diffOp{'-', l, a0 + i, b0})
		}
		for j, l := range b {
			out = append(out, diffOp{'+', l, a0 + n, b0 + j})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	// v[k+off] is the furthest x on diagonal k = x - y; trace keeps a copy
	// of v before each round d, to walk the path back.
	off := n + m
	v := make([]int, 2*off+2)
	var trace [][]int
	end := -1
	for d := 0; d <= min(n+m, maxDiffEdits) && end < 0; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[k-1+off] < v[k+1+off] {
				x = v[k+1+off] // down: an addition
			} else {
				x = v[k-1+off] + 1 // right: a removal
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[k+off] = x
			if x >= n && y >= m {
				end = d
				break
			}
		}
	}
	if end < 0 {
		return whole()
	}
	var rev []diffOp
	x, y := n, m
	for d := end; d > 0; d-- {
		pv := trace[d]
		k := x - y
		var pk int
		if k == -d || k != d && pv[k-1+off] < pv[k+1+off] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := pv[pk+off]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, diffOp{' ', a[x], a0 + x, b0 + y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, diffOp{'+', b[y], a0 + x, b0 + y})
		} else {
			x--
			rev = append(rev, diffOp{'-', a[x], a0 + x, b0 + y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, diffOp{' ', a[x], a0 + x, b0 + y})
	}
	out := make([]diffOp, 0, len(rev))
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return reorder(out)
}

// reorder puts the removals of each run of changes before its additions.
func reorder(ops []diffOp) []diffOp {
	out := make([]diffOp, 0, len(ops))
	for i := 0; i < len(ops); {
		if ops[i].op == ' ' {
			out = append(out, ops[i])
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].op != ' ' {
			j++
		}
		run := ops[i:j]
		aPos, bPos := run[0].a, run[0].b
		for _, o := range run {
			if o.op == '-' {
				out = append(out, diffOp{'-', o.line, o.a, bPos})
			}
		}
		for _, o := range run {
			if o.op == '+' {
				out = append(out, diffOp{'+', o.line, aPos + countOp(run, '-'), o.b})
			}
		}
		i = j
	}
	return out
}

func countOp(ops []diffOp, op byte) int {
	n := 0
	for _, o := range ops {
		if o.op == op {
			n++
		}
	}
	return n
}
