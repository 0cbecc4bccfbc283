package textdiff

import (
	"slices"
	"strings"
)

// The conflict markers [Merge] writes around each overlap, each on a line
// of its own: yours, then theirs (git's merge style, without the base).
const (
	MarkerYours  = "<<<<<<< yours"
	MarkerSplit  = "======="
	MarkerTheirs = ">>>>>>> theirs"
)

// Merged is the result of [Merge].
type Merged struct {
	// Text is the merge. When Conflicts is empty it holds both edits and
	// is ready to use; otherwise each overlap stands in it as
	//
	//	<<<<<<< yours
	//	(yours)
	//	=======
	//	(theirs)
	//	>>>>>>> theirs
	//
	// (a side whose last line lacks its newline gets one before the next
	// marker), to be resolved by hand.
	Text string
	// Conflicts are the overlaps, in the order of Text.
	Conflicts []Conflict
}

// Conflict is one place where yours and theirs both changed the same
// lines of base (or lines next to each other) differently.
type Conflict struct {
	// Base is the lines of base both edits changed ("" when both
	// inserted at the same place); Yours and Theirs what each put there,
	// exactly (no marker, no added newline).
	Base, Yours, Theirs string
	// BaseLine is the first line of Base in base (1-based); for an empty
	// Base, the line the insertions came before (the number of base's
	// lines + 1 at its end).
	BaseLine int
	// Line is the line of the conflict's opening marker in Merged.Text
	// (1-based).
	Line int
}

// Merge is the three-way merge (diff3) of two edits of base, line by
// line: each region that only one side changed takes that side's lines,
// a region both changed the same way takes them once, and a region both
// changed differently is a [Conflict]. Changes overlap when their lines
// in base overlap or touch (no unchanged line of base between them), as
// in git and diff3: an insertion right after a line the other side
// changed is a conflict. Each diff is textdiff's (bounded by [MaxCost]).
//
// Merge(base, base, x), Merge(base, x, base) and Merge(base, x, x) are
// all x, clean.
func Merge(base, yours, theirs string) Merged {
	bl, yl, tl := splitLines(base), splitLines(yours), splitLines(theirs)
	yh := hunksOf(diffLines(bl, yl, MaxCost))
	th := hunksOf(diffLines(bl, tl, MaxCost))
	var out []string
	var res Merged
	pos := 0 // base's lines before pos are in out
	for len(yh) > 0 || len(th) > 0 {
		// A chunk starts at the first hunk of either side and takes
		// every hunk that overlaps or touches it, from both sides, until
		// none does.
		var ys, ts []hunk
		take := func(side *[]hunk, into *[]hunk) {
			*into = append(*into, (*side)[0])
			*side = (*side)[1:]
		}
		if len(th) == 0 || len(yh) > 0 && yh[0].lo <= th[0].lo {
			take(&yh, &ys)
		} else {
			take(&th, &ts)
		}
		lo := min(first(ys, len(bl)), first(ts, len(bl)))
		hi := max(last(ys), last(ts))
		for {
			if len(yh) > 0 && yh[0].lo <= hi {
				take(&yh, &ys)
			} else if len(th) > 0 && th[0].lo <= hi {
				take(&th, &ts)
			} else {
				break
			}
			hi = max(last(ys), last(ts))
		}
		out = append(out, bl[pos:lo]...)
		pos = hi
		y, t := sideLines(ys, yl, bl, lo, hi), sideLines(ts, tl, bl, lo, hi)
		switch {
		case len(ys) == 0:
			out = append(out, t...)
		case len(ts) == 0, slices.Equal(y, t):
			out = append(out, y...)
		default:
			res.Conflicts = append(res.Conflicts, Conflict{Base: strings.Join(bl[lo:hi], ""),
				Yours: strings.Join(y, ""), Theirs: strings.Join(t, ""), BaseLine: lo + 1, Line: len(out) + 1})
			out = append(out, MarkerYours+"\n")
			out = appendEnded(out, y)
			out = append(out, MarkerSplit+"\n")
			out = appendEnded(out, t)
			out = append(out, MarkerTheirs+"\n")
		}
	}
	out = append(out, bl[pos:]...)
	res.Text = strings.Join(out, "")
	return res
}

// hunk is one changed region of a diff from base: base's lines [lo, hi)
// became the side's lines [slo, shi).
type hunk struct{ lo, hi, slo, shi int }

// hunksOf groups an edit script's runs of changes into hunks, in order;
// two hunks of one script always have an unchanged line between them.
func hunksOf(edits []edit) []hunk {
	var out []hunk
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		h := hunk{lo: edits[i].ai, hi: edits[i].ai, slo: edits[i].bi, shi: edits[i].bi}
		for ; i < len(edits) && edits[i].op != ' '; i++ {
			if edits[i].op == '-' {
				h.hi = edits[i].ai + 1
			} else {
				h.shi = edits[i].bi + 1
			}
		}
		out = append(out, h)
	}
	return out
}

// first is the base line the first of hs starts at, or n when hs is
// empty; last the base line the last ends at, or 0.
func first(hs []hunk, n int) int {
	if len(hs) == 0 {
		return n
	}
	return hs[0].lo
}

func last(hs []hunk) int {
	if len(hs) == 0 {
		return 0
	}
	return hs[len(hs)-1].hi
}

// sideLines is what a side holds in place of base's lines [lo, hi), which
// cover its hunks hs: base's own lines when hs is empty; otherwise one
// run of the side's lines, since between and around its hunks a side
// keeps base's lines.
func sideLines(hs []hunk, side, base []string, lo, hi int) []string {
	if len(hs) == 0 {
		return base[lo:hi]
	}
	return side[hs[0].slo-(hs[0].lo-lo) : hs[len(hs)-1].shi+(hi-hs[len(hs)-1].hi)]
}

// appendEnded appends lines to out, the last with a newline added when
// it lacks one (a marker follows it).
func appendEnded(out, lines []string) []string {
	out = append(out, lines...)
	if n := len(out); len(lines) > 0 && !strings.HasSuffix(out[n-1], "\n") {
		out[n-1] += "\n"
	}
	return out
}

// CountConflicts is the number of conflicts [Merge]'s markers still mark
// in text: the runs of a MarkerYours line, then a MarkerSplit line, then
// a MarkerTheirs line. A text whose merge was resolved by hand has none.
func CountConflicts(text string) int {
	n, want := 0, 0
	markers := [...]string{MarkerYours, MarkerSplit, MarkerTheirs}
	for _, l := range splitLines(text) {
		switch l = strings.TrimSuffix(l, "\n"); {
		case l == markers[want]:
			if want = (want + 1) % len(markers); want == 0 {
				n++
			}
		case l == MarkerYours: // a new opening marker starts again
			want = 1
		}
	}
	return n
}
