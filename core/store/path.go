// Paths: their validation, reserved segments, and folder arithmetic.

package store

import (
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// MaxSegmentChars is the longest allowed path segment, in runes.
const MaxSegmentChars = rowpath.MaxSegmentChars

// ReservedSegmentPrefix starts the path segments no backend accepts: a
// file store keeps its bookkeeping (".agentmem/") and temporary files
// (".agentmem-tmp-…") under such names, so every backend refuses them
// alike, at any depth.
const ReservedSegmentPrefix = rowpath.Reserved

// ValidatePath reports whether p is a valid store path: "/"-separated
// segments of 1–200 characters from [A-Za-z0-9_.-], none containing "..",
// none a lone "." (which the reference accepts, but which would name its
// parent directory in a file store) and none starting with
// [ReservedSegmentPrefix]. The error wraps ErrInvalidPath, and also
// ErrReservedPath for a reserved segment.
func ValidatePath(p string) error {
	if !rowpath.ValidSegments(p) {
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
	if !rowpath.ValidSegments(trimmed) {
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

func cutRunes(s string, n int) (string, bool) { return driver.CutRunes(s, n) }
