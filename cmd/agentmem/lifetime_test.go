package main

import (
	"errors"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// TestLifetimeFlagsApply pins put's rule over the file's lifetime now:
// what the flags do not name is kept; --pin removes an expiry; an expiry
// for a file that stays pinned is refused.
func TestLifetimeFlagsApply(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	later := now.Add(48 * time.Hour)
	expiring := lifetime{expires: later}
	pinned := lifetime{pinned: true}
	for _, c := range []struct {
		name  string
		flags lifetimeFlags
		cur   lifetime
		want  lifetime
		fails bool
	}{
		{"no flag keeps an expiry", lifetimeFlags{}, expiring, expiring, false},
		{"no flag keeps a pin", lifetimeFlags{}, pinned, pinned, false},
		{"no flag, no file", lifetimeFlags{}, lifetime{}, lifetime{}, false},
		{"--expires sets, from the store's clock", lifetimeFlags{expires: "7d", expiresGiven: true}, lifetime{}, lifetime{expires: now.Add(7 * 24 * time.Hour)}, false},
		{"--expires replaces", lifetimeFlags{expires: "12h", expiresGiven: true}, expiring, lifetime{expires: now.Add(12 * time.Hour)}, false},
		{"--expires never clears", lifetimeFlags{expires: "never", expiresGiven: true}, expiring, lifetime{}, false},
		{"--pin removes the expiry", lifetimeFlags{pin: true}, expiring, pinned, false},
		{"--unpin keeps no expiry", lifetimeFlags{unpin: true}, pinned, lifetime{}, false},
		{"--unpin --expires", lifetimeFlags{unpin: true, expires: "2w", expiresGiven: true}, pinned, lifetime{expires: now.Add(14 * 24 * time.Hour)}, false},
		{"--expires never on a pinned file keeps the pin", lifetimeFlags{expires: "never", expiresGiven: true}, pinned, pinned, false},
		{"--expires on a pinned file", lifetimeFlags{expires: "7d", expiresGiven: true}, pinned, lifetime{}, true},
		{"--expires in the past", lifetimeFlags{expires: "2000-01-01", expiresGiven: true}, lifetime{}, lifetime{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.flags.apply("kamal/main/trip.md", c.cur, now)
			if c.fails {
				if !errors.Is(err, store.ErrInvalidLifetime) || exitCode(err) != exitUsage {
					t.Fatalf("apply = %v, %v; want an ErrInvalidLifetime with exit code %d", got, err, exitUsage)
				}
				return
			}
			if err != nil || !got.equal(c.want) {
				t.Fatalf("apply = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

// TestLifetimeString pins the LIFETIME column of ls -l and log.
func TestLifetimeString(t *testing.T) {
	at := time.Date(2026, 12, 31, 18, 0, 0, 500e6, time.FixedZone("ICT", 7*3600))
	for _, c := range []struct {
		l    lifetime
		want string
	}{
		{lifetime{}, "-"},
		{lifetime{pinned: true}, "pinned"},
		{lifetime{expires: at}, "expires 2026-12-31T11:00:00Z"},
	} {
		if got := c.l.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.l, got, c.want)
		}
	}
}
