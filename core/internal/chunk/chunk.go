// Package chunk splits a Markdown memory file into the passages that search
// embeds: a file of at most [MaxRunes] runes is one chunk; a longer one is
// cut at its headings into sections, each section into blocks (paragraphs,
// list items with their nested lines, fenced code, a conversation's turns),
// and the blocks of a section are packed in order into chunks of at most
// MaxRunes runes. A block longer than that is cut at line ends, then
// sentence ends, then spaces, never inside a word (unless one word is
// longer than MaxRunes). A chunk shorter than [MinRunes] is merged into the
// one before it when both fit. Each chunk keeps its rune span in the file
// and its heading path; the text to embed is the file's name, the heading
// path and the span's text, and its hash is the SHA-256 of that text.
//
// The split depends only on the name and the content: the same file always
// gives the same chunks, and an edit changes only the chunks it touches and
// those packed after it in the same section.
package chunk

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a chunk's span, in runes.
const (
	// MaxRunes is the longest span of a chunk.
	MaxRunes = 1000
	// MinRunes is the span below which a chunk is merged into the one
	// before it, when the two fit in MaxRunes.
	MinRunes = 200
)

// Separator joins the parts of a heading path and the file's name.
const Separator = " › "

// Chunk is one passage of a file.
type Chunk struct {
	// Start and End are the span's rune offsets in the content, End
	// excluded.
	Start, End int
	// Headings is the heading path of the span's first line ("Plans ›
	// Travel"), "" before the first heading.
	Headings string
	// Text is what is embedded: the name, the heading path and the span.
	Text string
	// Hash is the unpadded base64url SHA-256 of Text (first 16 bytes).
	Hash string
}

// line is one line of the content with its rune offsets (end includes the
// newline) and, for a heading, its level and title.
type line struct {
	start, end int
	text       string
	level      int
	title      string
}

// block is a span that is never cut unless it alone exceeds MaxRunes.
type block struct {
	start, end int
	headings   string
}

// Split returns the chunks of content, a file whose scope-relative name is
// name, in order. Empty or blank content has no chunk.
func Split(name, content string) []Chunk {
	if strings.TrimSpace(content) == "" {
		return nil
	}
	runes := []rune(content)
	if len(runes) <= MaxRunes {
		return []Chunk{newChunk(name, runes, 0, len(runes), firstHeadings(content))}
	}
	blocks := blocksOf(lines(content))
	var out []Chunk
	var cur *block
	flush := func() {
		if cur != nil {
			out = append(out, newChunk(name, runes, cur.start, cur.end, cur.headings))
			cur = nil
		}
	}
	for _, b := range blocks {
		for _, piece := range cut(runes, b) {
			switch {
			case cur == nil:
			case cur.headings == piece.headings && piece.end-cur.start <= MaxRunes:
				cur.end = piece.end // pack into the chunk
				continue
			default:
				flush()
			}
			p := piece
			cur = &p
		}
	}
	flush()
	return mergeTiny(name, runes, out)
}

// mergeTiny merges each chunk shorter than MinRunes into the one before it
// when the two spans fit in MaxRunes; the merged chunk keeps the common
// part of the two heading paths.
func mergeTiny(name string, runes []rune, cs []Chunk) []Chunk {
	var out []Chunk
	for _, c := range cs {
		if n := len(out); n > 0 {
			prev := out[n-1]
			small := c.End-c.Start < MinRunes || prev.End-prev.Start < MinRunes
			if small && c.End-prev.Start <= MaxRunes {
				out[n-1] = newChunk(name, runes, prev.Start, c.End, common(prev.Headings, c.Headings))
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// common returns the longest common heading path of a and b.
func common(a, b string) string {
	as, bs := strings.Split(a, Separator), strings.Split(b, Separator)
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return strings.Join(as[:n], Separator)
}

func newChunk(name string, runes []rune, start, end int, headings string) Chunk {
	var b strings.Builder
	b.WriteString(name)
	if headings != "" {
		b.WriteString(Separator)
		b.WriteString(headings)
	}
	b.WriteString("\n")
	b.WriteString(string(runes[start:end]))
	text := b.String()
	sum := sha256.Sum256([]byte(text))
	return Chunk{Start: start, End: end, Headings: headings, Text: text, Hash: base64.RawURLEncoding.EncodeToString(sum[:16])}
}

// lines splits content into lines with rune offsets and recognises ATX
// headings outside fenced code.
func lines(content string) []line {
	var out []line
	pos := 0
	fence := ""
	for len(content) > 0 {
		i := strings.IndexByte(content, '\n')
		text := content
		if i >= 0 {
			text = content[:i+1]
		}
		content = content[len(text):]
		n := utf8.RuneCountInString(text)
		l := line{start: pos, end: pos + n, text: strings.TrimRight(text, "\r\n")}
		pos += n
		trimmed := strings.TrimLeft(l.text, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			l.level, l.title = heading(l.text)
		}
		out = append(out, l)
	}
	return out
}

// heading returns the level and title of an ATX heading line ("## Plans"),
// or 0.
func heading(s string) (int, string) {
	level := 0
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(s) && s[level] != ' ' && s[level] != '\t') {
		return 0, ""
	}
	title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s[level:]), "#"))
	if title == "" {
		return 0, ""
	}
	return level, title
}

// firstHeadings is the heading path of a one-chunk file: its first heading.
func firstHeadings(content string) string {
	for _, l := range lines(content) {
		if l.level > 0 {
			return l.title
		}
		if strings.TrimSpace(l.text) != "" {
			return ""
		}
	}
	return ""
}

// blocksOf groups lines into blocks: a heading starts a section (and a
// block); a blank line ends a block; a list item, a conversation turn
// ("User: …") or a fence starts one; lines inside a fence stay together.
func blocksOf(ls []line) []block {
	var out []block
	var stack []string // titles by level
	path := ""
	var cur *block
	end := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	inFence := false
	for _, l := range ls {
		trimmed := strings.TrimLeft(l.text, " ")
		fenceLine := strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")
		switch {
		case inFence:
			cur.end = l.end
			if fenceLine {
				inFence = false
			}
			continue
		case l.level > 0:
			end()
			for len(stack) < l.level {
				stack = append(stack, "")
			}
			stack = append(stack[:l.level-1], l.title)
			path = joinPath(stack)
			cur = &block{start: l.start, end: l.end, headings: path}
			continue
		case strings.TrimSpace(l.text) == "":
			if cur != nil {
				cur.end = l.end
			}
			end()
			continue
		case fenceLine:
			end()
			inFence = true
		case startsItem(l.text):
			if cur != nil && !headingOnly(cur, ls) {
				end()
			}
		}
		if cur == nil {
			cur = &block{start: l.start, headings: path}
		}
		cur.end = l.end
	}
	end()
	return out
}

// headingOnly reports whether b holds only its heading line, so that the
// first block of a section keeps its heading.
func headingOnly(b *block, ls []line) bool {
	for _, l := range ls {
		if l.start == b.start {
			return l.level > 0 && l.end == b.end
		}
	}
	return false
}

func joinPath(stack []string) string {
	var parts []string
	for _, s := range stack {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, Separator)
}

// startsItem reports whether a line starts a list item at the top level
// ("- ", "* ", "+ ", "1. ", "2) ") or a conversation turn ("User: ",
// "assistant: ").
func startsItem(s string) bool {
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ' {
		return true
	}
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return true
	}
	// A speaker label: one or two words of letters, then ": ".
	j := strings.Index(s, ": ")
	if j <= 0 || j > 24 {
		return false
	}
	words := 0
	for w := range strings.FieldsSeq(s[:j]) {
		words++
		for _, r := range w {
			if !unicode.IsLetter(r) {
				return false
			}
		}
	}
	return words >= 1 && words <= 2 && unicode.IsLetter(rune(s[0]))
}

// cut returns b itself when it fits in MaxRunes, and otherwise pieces of
// at most MaxRunes runes cut at the last line end, else sentence end, else
// space within the bound.
func cut(runes []rune, b block) []block {
	var out []block
	start := b.start
	for b.end-start > MaxRunes {
		at := breakAt(runes, start, start+MaxRunes)
		out = append(out, block{start: start, end: at, headings: b.headings})
		start = at
	}
	return append(out, block{start: start, end: b.end, headings: b.headings})
}

// breakAt returns the best place in (start, limit] to end a piece: after
// the last newline, else after the last sentence end, else after the last
// space, in the second half of the span when there is one there; else
// limit (a word longer than the span).
func breakAt(runes []rune, start, limit int) int {
	half := start + (limit-start)/2
	for _, ok := range []func(i int) bool{
		func(i int) bool { return runes[i-1] == '\n' },
		func(i int) bool {
			return i >= 2 && unicode.IsSpace(runes[i-1]) && strings.ContainsRune(".!?", runes[i-2])
		},
		func(i int) bool { return unicode.IsSpace(runes[i-1]) },
	} {
		for i := limit; i > half; i-- {
			if ok(i) {
				return i
			}
		}
	}
	for i := half; i > start; i-- {
		if unicode.IsSpace(runes[i-1]) {
			return i
		}
	}
	return limit
}
