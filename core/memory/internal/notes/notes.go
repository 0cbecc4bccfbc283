// Package notes holds the text rules of a notebook's content that both
// package memory (the notebook) and package pruned (the pruned-history
// pipeline that feeds it) apply: what counts as blank, how lines split,
// how stored memory tags are neutralised, how the scope's other files are
// picked from a listing, and the operation of an append.
package notes

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/canon"
	"github.com/agentmem/agentmem/core/store"
)

// MainFile is the notebook's main file (memory.MainFile).
const MainFile = "MEMORY.md"

// IsSpace reports a rune the notebook trims: Unicode white space and the
// separators U+001C-U+001F.
func IsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// IsBlank reports text made only of [IsSpace] runes.
func IsBlank(s string) bool { return strings.TrimFunc(s, IsSpace) == "" }

// Runes counts the runes of s: every limit counts runes, not bytes.
func Runes(s string) int { return utf8.RuneCountInString(s) }

// SplitLines splits like Python's str.splitlines: on \n, \r\n, \r, \v, \f,
// U+001C-U+001E, U+0085, U+2028 and U+2029; no trailing empty line.
func SplitLines(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		default:
			continue
		}
		if i < start { // the \n of a \r\n already consumed
			continue
		}
		out = append(out, s[start:i])
		start = i + len(string(r))
		if r == '\r' && strings.HasPrefix(s[start:], "\n") {
			start++
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// memoryTag matches the "<" of a <memory> or </memory> tag in any case or
// spacing: any run of spaces, separators (U+2028, U+2029 …), control
// characters (every line break SplitLines knows: \r, \v, \f, U+001C-U+001E,
// U+0085) and invisible format characters (U+200B, U+FEFF …) counts as
// spacing, since a reader (or a line splitter) may drop or turn each into
// a break.
var memoryTag = regexp.MustCompile(`(?i)<[\s\p{Z}\p{Cc}\p{Cf}]*/?[\s\p{Z}\p{Cc}\p{Cf}]*memory\b`)

// EscapeTags neutralises stored memory tags so stored text cannot end (or
// fake) a block: their "<" becomes "&lt;". The snapshot escapes text
// whose line breaks are already normalised to "\n", the form it renders.
func EscapeTags(s string) string {
	return memoryTag.ReplaceAllStringFunc(s, func(tag string) string { return "&lt;" + tag[1:] })
}

// OtherFiles picks the scope's other Markdown files from a listing of
// limit+2 paths under prefix: at most limit names, sorted, and whether
// more exist. ok is false when a path is outside prefix (the caller's
// memory.ErrScope).
func OtherFiles(paths []string, prefix string, limit int) (names []string, truncated, ok bool) {
	paths = paths[:min(len(paths), limit+2)]
	for _, p := range paths {
		name, in := strings.CutPrefix(p, prefix)
		if !in {
			return nil, false, false
		}
		if strings.Contains(name, "/") || name == MainFile || !strings.HasSuffix(name, ".md") {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	truncated = len(names) > limit || len(paths) >= limit+2
	return names[:min(len(names), limit)], truncated, true
}

// Read reads path, returning nil when it does not exist.
func Read(ctx context.Context, s *store.Store, path string, maxChars int) (*store.File, error) {
	f, err := s.Read(ctx, path, maxChars)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return f, err
}

// AppendOperation is the operation of an append of text to path under
// the caller's id (nil without one): the same for a plain append and a
// rotating one, whose fingerprint names the series' first path.
func AppendOperation(id, path, text string) *store.Operation {
	if id == "" {
		return nil
	}
	return &store.Operation{ID: id, Fingerprint: canon.Hash(map[string]any{"kind": "append", "path": path, "text": text})}
}

// Backoff waits a little before compare-and-swap attempt i+1, so that
// concurrent writers spread out.
func Backoff(ctx context.Context, i int) error {
	return driver.Sleep(ctx, time.Duration(rand.IntN(250*(i%8+1)))*time.Microsecond)
}

var fileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)

// FileName turns a file argument into a memory file name: trimmed, ".md"
// appended when missing (an extension ".md" in any case is written ".md"),
// any case of MEMORY.md written MainFile, then 1-80 characters of
// [A-Za-z0-9._-] starting with a letter or digit, no "..". ok is false
// when the result is not such a name.
func FileName(raw string) (name string, ok bool) {
	name = strings.TrimFunc(raw, IsSpace)
	if n := len(name) - len(".md"); n >= 0 && strings.EqualFold(name[n:], ".md") {
		name = name[:n] + ".md"
	} else if name != "" {
		name += ".md"
	}
	if strings.EqualFold(name, MainFile) {
		name = MainFile
	}
	return name, ValidName(name)
}

// ValidName reports a memory file name as [FileName] makes them.
func ValidName(name string) bool {
	return fileNameRE.MatchString(name) && !strings.Contains(name, "..")
}
