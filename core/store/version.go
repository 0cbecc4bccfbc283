// Versions: how the store makes them (monotonic ULIDs), and what a version
// says (the operation that wrote it, the write a fence still stands for).

package store

import (
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/internal/ulid"
)

// opMarker separates a version from the id of the operation that wrote it
// on the primitive path, where the operation's receipt may still be pending.
const opMarker = "~"

// newVersion returns a fresh version (a monotonic ULID, see [ulid.New]).
// When opID is not empty the version also names it, so that whoever later
// overwrites the row knows which receipt to settle first.
func newVersion(now time.Time, opID string) string {
	if opID == "" {
		return ulid.New(now)
	}
	return ulid.New(now) + opMarker + opID
}

// fenceMarker separates the fresh part of a fence's version from the
// origin it carries.
const fenceMarker = "+"

// fenceVersion returns a fresh version for a fence of the row whose version
// is v. A fence changes nothing a reader sees, so the new version carries
// the whole version of the write whose row it still is (unfenced(v)).
func fenceVersion(now time.Time, v string) string {
	return newVersion(now, "") + fenceMarker + unfenced(v)
}

// unfenced returns the version of the write that made the row with
// version v, operation included: v itself, or the version a fence carries.
// The history records a change's Previous this way, so that it names the
// entry of the write it replaced.
func unfenced(v string) string {
	if isFence(v) {
		return v[stemLen+len(fenceMarker):]
	}
	return v
}

// stemLen is the length of newVersion's time-ordered part, which every
// version starts with.
const stemLen = 26

// isFence reports whether v is the version of a fence.
func isFence(v string) bool {
	return len(v) > stemLen && strings.HasPrefix(v[stemLen:], fenceMarker)
}

// origin returns the version of the write that made the row with version
// v: v without the operation it names, or the origin a fence carries.
func origin(v string) string {
	v, _, _ = strings.Cut(v, opMarker) // an operation id may hold fenceMarker
	if _, o, ok := strings.Cut(v, fenceMarker); ok {
		return o
	}
	return v
}

// refenced reports whether version v is expected after zero or more fences:
// another version of the very row expected, with nothing written since.
func refenced(v, expected string) bool {
	return v != "" && expected != "" && origin(v) == origin(expected)
}

// versionOperation returns the operation id named by a version written on
// the primitive path, or "".
func versionOperation(v string) string {
	if isFence(v) {
		return "" // a fence writes no operation's row
	}
	_, op, _ := strings.Cut(v, opMarker)
	return op
}
