package anthropic

import (
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// maxLines is the reference handler's line limit for viewing a file.
const maxLines = 999999

// lineNumberWidth is the width line numbers are right-aligned to.
const lineNumberWidth = 6

// formatSize writes a size in bytes as the reference handler does: "0B",
// "512B", "4.0K", "1.5M".
func formatSize(n int64) string {
	if n <= 0 {
		return "0B"
	}
	units := []string{"B", "K", "M", "G"}
	i := min((bits.Len64(uint64(n))-1)/10, len(units)-1)
	size := float64(n) / float64(int64(1)<<(10*i))
	if size == float64(int64(size)) {
		return fmt.Sprintf("%d%s", int64(size), units[i])
	}
	return fmt.Sprintf("%.1f%s", size, units[i])
}

// numbered writes lines with their 1-based numbers from first.
func numbered(lines []string, first int) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%*d\t%s", lineNumberWidth, first+i, l)
	}
	return b.String()
}

// pySlice returns the bounds of Python's s[start:end] for a sequence of
// length n (negative indices count from the end; bounds are clamped).
func pySlice(n, start, end int) (int, int) {
	clamp := func(i int) int {
		if i < 0 {
			i += n
			if i < 0 {
				return 0
			}
		}
		return min(i, n)
	}
	s, e := clamp(start), clamp(end)
	if e < s {
		e = s
	}
	return s, e
}

// splitLines splits s as Python's str.splitlines does: on \n, \r, \r\n,
// \v, \f, \x1c, \x1d, \x1e, \x85, U+2028 and U+2029, without a final empty
// line.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, s[start:i])
			i += size
			if r == '\r' && i < len(s) && s[i] == '\n' {
				i++
			}
			start = i
		default:
			i += size
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// occurrenceLines returns the 1-based line of every occurrence of sub in
// s, overlapping ones included, as the reference handler reports them.
func occurrenceLines(s, sub string) []string {
	var out []string
	for start := 0; start <= len(s); {
		i := strings.Index(s[start:], sub)
		if i < 0 {
			break
		}
		pos := start + i
		out = append(out, fmt.Sprint(strings.Count(s[:pos], "\n")+1))
		// Step one character on, as the reference does.
		if pos == len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[pos:])
		start = pos + size
	}
	return out
}
