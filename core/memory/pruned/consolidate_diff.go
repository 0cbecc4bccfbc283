package pruned

import (
	"strings"

	"github.com/agentmem/agentmem/core/memory/internal/notes"
)

// diffChanges renders changes as a line diff: for each file a
// "--- a/<file>" / "+++ b/<file>" header, then its lines prefixed with
// " " (kept, at most two around each change), "-" (removed) or "+"
// (added), with "@@" between distant changes.
func diffChanges(changes []FileChange) string {
	var b strings.Builder
	for _, ch := range changes {
		before := "a/" + ch.File
		if ch.Created {
			before = "/dev/null"
		}
		b.WriteString("--- " + before + "\n+++ b/" + ch.File + "\n")
		writeLineDiff(&b, notes.SplitLines(ch.Before), notes.SplitLines(ch.After))
	}
	return b.String()
}

// writeLineDiff writes the diff of a and b, from their longest common
// subsequence of lines (quadratic, for notebook-sized files).
func writeLineDiff(b *strings.Builder, a, c []string) {
	n, m := len(a), len(c)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == c[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == c[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', c[j]})
			j++
		}
	}
	const context = 2
	near := func(k int) bool {
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			if lines[d].op != ' ' {
				return true
			}
		}
		return false
	}
	gap := false
	for k, l := range lines {
		if l.op == ' ' && !near(k) {
			gap = true
			continue
		}
		if gap {
			b.WriteString("@@\n")
			gap = false
		}
		b.WriteString(string(l.op) + l.text + "\n")
	}
}
