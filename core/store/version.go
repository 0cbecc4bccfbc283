package store

import (
	"crypto/rand"
	"strings"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// opMarker separates a version from the id of the operation that wrote it
// on the primitive path, where the operation's receipt may still be pending.
const opMarker = "~"

// newVersion returns a fresh 26-character version (48 bits of milliseconds
// and 80 random bits, Crockford base32, as a ULID). When opID is not empty
// the version also names it, so that whoever later overwrites the row knows
// which receipt to settle first.
func newVersion(now time.Time, opID string) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	var out [26]byte
	// 128 bits → 26 base32 digits, most significant first.
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[i+8])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	if opID == "" {
		return string(out[:])
	}
	return string(out[:]) + opMarker + opID
}

// fenceMarker separates the fresh part of a fence's version from the
// origin it carries.
const fenceMarker = "+"

// fenceVersion returns a fresh version for a fence of the row whose version
// is v. A fence changes nothing a reader sees, so the new version carries
// v's origin: the version of the write whose row it still is.
func fenceVersion(now time.Time, v string) string {
	return newVersion(now, "") + fenceMarker + origin(v)
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
	_, op, _ := strings.Cut(v, opMarker)
	return op
}
