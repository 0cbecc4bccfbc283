// A memory file's lifetime as the notebook shows and takes it: the expiry
// a write may give a file (write_memory's expires argument, the CLI's
// --expires, the API and the console), and how the file list marks pinned
// and expiring files.

package memory

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// NeverExpires is the expiry text that removes a file's expiry.
const NeverExpires = "never"

// ParseExpiry parses an expiry as people and models write it, relative to
// now: a duration from now ("7d", "2w", "12h", "90m", or any
// time.ParseDuration text), a date ("2026-12-31": the file is kept through
// that day, UTC, and expires when it ends), or an RFC 3339 date and time.
// It returns the zero time for [NeverExpires]. An expiry that is not in
// the future, or text it cannot read, is an error wrapping
// store.ErrInvalidLifetime that says what it accepts.
func ParseExpiry(text string, now time.Time) (time.Time, error) {
	s := strings.TrimSpace(text)
	if strings.EqualFold(s, NeverExpires) {
		return time.Time{}, nil
	}
	var at time.Time
	if d, ok := parseDays(s); ok {
		at = now.Add(d)
	} else if d, err := time.ParseDuration(s); err == nil {
		at = now.Add(d)
	} else if t, err := time.Parse(time.DateOnly, s); err == nil {
		at = t.AddDate(0, 0, 1)
	} else if t, err := time.Parse(time.RFC3339, s); err == nil {
		at = t
	} else {
		return time.Time{}, fmt.Errorf("%w: expiry %q: give a duration from now (7d, 2w, 12h), a date (2026-12-31), a date and time (2026-12-31T18:00:00Z), or %q", store.ErrInvalidLifetime, text, NeverExpires)
	}
	if !at.After(now) {
		return time.Time{}, fmt.Errorf("%w: expiry %q is not in the future (it would be %s)", store.ErrInvalidLifetime, text, at.UTC().Format(time.RFC3339))
	}
	return at, nil
}

// parseDays reads "<n>d" and "<n>w".
func parseDays(s string) (time.Duration, bool) {
	if len(s) < 2 {
		return 0, false
	}
	unit := 24 * time.Hour
	switch s[len(s)-1] {
	case 'd':
	case 'w':
		unit *= 7
	default:
		return 0, false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n <= 0 || n > 100*366 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// FormatExpiry renders an expiry for people and models: UTC, to the
// minute.
func FormatExpiry(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// FileLabel is a file's line in the memory block's file list: its name,
// marked " (pinned)" or " (expires 2026-12-31 00:00 UTC)" by its listed
// entry. A consolidation request lists the files the same way.
func FileLabel(name string, e store.Entry) string {
	if e.Pinned {
		return name + " (pinned)"
	}
	if at := e.ExpiresAt(); !at.IsZero() {
		return name + " (expires " + FormatExpiry(at) + ")"
	}
	return name
}

// lifetimeChange is what a write_memory call says of its file's lifetime.
type lifetimeChange struct {
	set     bool      // the call gave expires
	expires time.Time // zero: never
}

// lifetimeArg reads write_memory's expires argument for the file name.
func (m *Memory) lifetimeArg(name string, expires *string) (lifetimeChange, *ToolError) {
	if expires == nil {
		return lifetimeChange{}, nil
	}
	at, err := ParseExpiry(*expires, m.s.Now())
	if err != nil {
		return lifetimeChange{}, expiryErr(err)
	}
	if name == MainFile && !at.IsZero() {
		return lifetimeChange{}, toolErr(fmt.Sprintf("%s never expires: it is the notebook itself. Put what "+
			"stops being true in a file of its own (trip.md, say) and give that file the expiry.", MainFile))
	}
	return lifetimeChange{set: true, expires: at}, nil
}

// apply returns the expiry and pin the write stores over cur (nil:
// absent): the file's own, unless the call named an expiry; or the
// mistake that refuses it (an expiry for a pinned file).
func (c lifetimeChange) apply(name string, cur *store.File) (time.Time, bool, string) {
	var expires time.Time
	pinned := false
	if cur != nil {
		expires, pinned = cur.ExpiresAt, cur.Pinned
	}
	if !c.set {
		return expires, pinned, ""
	}
	if pinned && !c.expires.IsZero() {
		return time.Time{}, false, fmt.Sprintf("Memory file %q is pinned, so it never expires; nothing was "+
			"written. Write it again with expires null.", name)
	}
	return c.expires, pinned, ""
}

// expiryErr is the tool error of an expiry the model must fix.
func expiryErr(err error) *ToolError {
	return toolErr("Invalid expires: " + strings.TrimPrefix(err.Error(), store.ErrInvalidLifetime.Error()+": ") + ".")
}
