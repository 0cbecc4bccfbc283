// Highlights: where a match's snippet shows the words its query matched.

package search

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Span is a run of a match's snippet: the runes [Start, End) of
// [Match.Snippet], counted in runes (not bytes) from its start, End
// exclusive, 0 <= Start < End <= the snippet's length in runes.
type Span struct {
	// Start is the first rune of the run, counted from the snippet's start.
	Start int
	// End is one past its last rune.
	End int
}

// highlights returns the spans of marks (rune ranges of a text, sorted by
// start) that lie whole inside the window [start, end) of that text, in
// the window's offsets, merged where they overlap. The window's cut ends
// are its first and last three runes (cutStart, cutEnd), shown as "...":
// a mark that reaches into one (a word the cut halves) is left out, so a
// span never covers a dot that is not the text's.
func highlights(marks []occurrence, start, end int, cutStart, cutEnd bool) []Span {
	lo, hi := start, end
	if cutStart {
		lo += 3
	}
	if cutEnd {
		hi -= 3
	}
	var out []Span
	for _, m := range marks {
		if m.start < lo || m.end > hi || m.end <= m.start {
			continue
		}
		s := Span{m.start - start, m.end - start}
		if n := len(out); n > 0 && s.Start < out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.End)
			continue
		}
		out = append(out, s)
	}
	return out
}

// literalMarks returns where content holds the literal terms
// (lower-cased): each term's non-overlapping occurrences in the
// lower-cased content, as the literal score counts them, in rune offsets
// (lower-casing keeps each rune one rune), sorted by start.
func literalMarks(content string, terms []string) []occurrence {
	lower := strings.ToLower(content)
	var marks []occurrence // in bytes of lower first
	for j, t := range terms {
		if t == "" {
			continue
		}
		for at := 0; ; {
			i := strings.Index(lower[at:], t)
			if i < 0 {
				break
			}
			marks = append(marks, occurrence{j, at + i, at + i + len(t)})
			at += i + len(t)
		}
	}
	slices.SortFunc(marks, func(a, b occurrence) int { return cmp.Compare(a.start, b.start) })
	// Byte offsets to rune offsets, in one pass over the starts and
	// ends (an end may precede a later mark's start: count each from
	// the last offset turned).
	var at, runes int
	toRunes := func(b int) int {
		if b < at {
			return runes - utf8.RuneCountInString(lower[b:at])
		}
		runes += utf8.RuneCountInString(lower[at:b])
		at = b
		return runes
	}
	for i := range marks {
		end := marks[i].end
		marks[i].start = toRunes(marks[i].start)
		marks[i].end = toRunes(end)
	}
	return marks
}
