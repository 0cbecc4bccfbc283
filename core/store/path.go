// Paths: their validation, reserved segments, and folder arithmetic.

package store

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// MaxSegmentChars is the longest allowed path segment, in runes.
const MaxSegmentChars = 200

// ReservedSegmentPrefix starts the path segments no backend accepts: a
// file store keeps its bookkeeping (".agentmem/") and temporary files
// (".agentmem-tmp-…") under such names, so every backend refuses them
// alike, at any depth.
const ReservedSegmentPrefix = ".agentmem"

// ValidatePath reports whether p is a valid store path: "/"-separated
// segments of 1–200 characters from [A-Za-z0-9_.-], none containing "..",
// none a lone "." (which the reference accepts, but which would name its
// parent directory in a file store) and none starting with
// [ReservedSegmentPrefix]. The error wraps ErrInvalidPath, and also
// ErrReservedPath for a reserved segment.
func ValidatePath(p string) error {
	if !validPath(p) {
		return fmt.Errorf("%w: %q", ErrInvalidPath, p)
	}
	return reservedSegment(p)
}

// ValidatePrefix reports whether p is a valid listing prefix: empty, or a
// valid path after removing one trailing "/". The error wraps
// ErrInvalidPath (and ErrReservedPath, as for ValidatePath).
func ValidatePrefix(p string) error {
	if p == "" {
		return nil
	}
	trimmed := strings.TrimSuffix(p, "/")
	if !validPath(trimmed) {
		return fmt.Errorf("%w: %q", ErrInvalidPath, p)
	}
	return reservedSegment(trimmed)
}

func reservedSegment(p string) error {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ReservedSegmentPrefix) {
			return fmt.Errorf("%w: %q: segments starting with %q are reserved for backend bookkeeping: %w",
				ErrInvalidPath, p, ReservedSegmentPrefix, ErrReservedPath)
		}
	}
	return nil
}

func validPath(p string) bool {
	if p == "" {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if !validSegment(seg) {
			return false
		}
	}
	return true
}

func validSegment(s string) bool {
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

// isFolder reports whether prefix names a whole folder: the root "" or a
// prefix ending in "/".
func isFolder(prefix string) bool { return prefix == "" || strings.HasSuffix(prefix, "/") }

// pastFolder returns, for a path nested below prefix ("p/f/x.md" under
// "p/"), a string greater than every path in its folder ("p/f/~") and
// smaller than every later path ("p/f0"): "~" sorts after every byte a
// path may hold. A path directly under prefix is returned as it is.
func pastFolder(path, prefix string) string {
	rest := path[len(prefix):]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return prefix + rest[:i+1] + "~"
	}
	return path
}

// directlyUnder reports whether path lies directly under prefix: it starts
// with prefix and the rest holds no "/".
func directlyUnder(path, prefix string) bool {
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && rest != "" && !strings.Contains(rest, "/")
}

func cutRunes(s string, n int) (string, bool) { return driver.CutRunes(s, n) }
