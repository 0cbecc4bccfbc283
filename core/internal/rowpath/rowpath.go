// Package rowpath holds the rules of store paths that the store and its
// indexes share: what a segment may hold, the reserved segments, and
// folder arithmetic. The store's exported validation (store.ValidatePath)
// wraps these with its errors.
package rowpath

import (
	"strings"
	"unicode/utf8"
)

// MaxSegmentChars is the longest allowed path segment, in runes.
const MaxSegmentChars = 200

// Reserved starts the path segments no backend accepts: the store's
// derived rows and a file store's bookkeeping live under such names.
const Reserved = ".agentmem"

// Valid reports whether p is a valid path: valid segments, none reserved.
func Valid(p string) bool { return ValidSegments(p) && !HasReserved(p) }

// HasReserved reports whether a segment of p starts with [Reserved].
func HasReserved(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, Reserved) {
			return true
		}
	}
	return false
}

// ValidSegments reports whether p is "/"-separated valid segments.
func ValidSegments(p string) bool {
	if p == "" {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if !ValidSegment(seg) {
			return false
		}
	}
	return true
}

// ValidSegment reports whether s is a valid path segment: 1–200 runes of
// [A-Za-z0-9_.-], not a lone "." and without "..".
func ValidSegment(s string) bool {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxSegmentChars {
		return false
	}
	if s == "." || strings.Contains(s, "..") {
		return false // "." would alias its parent in a file store
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// IsFolder reports whether prefix names a whole folder: the root "" or a
// prefix ending in "/".
func IsFolder(prefix string) bool { return prefix == "" || strings.HasSuffix(prefix, "/") }

// DirectlyUnder reports whether path lies directly under prefix: it starts
// with prefix and the rest holds no "/".
func DirectlyUnder(path, prefix string) bool {
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// ReservedAt returns, for a row path with a segment starting with
// Reserved (the store's derived rows), a string past every
// path in that segment's folder ("k/.agentmem-index/~"), and false for an
// ordinary path.
func ReservedAt(p string) (string, bool) {
	off := 0
	for {
		rest := p[off:]
		if strings.HasPrefix(rest, Reserved) {
			end := strings.IndexByte(rest, '/')
			if end < 0 {
				return p + "~", true
			}
			return p[:off+end+1] + "~", true
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", false
		}
		off += i + 1
	}
}
