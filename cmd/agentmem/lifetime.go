// A file's lifetime (its expiry and its pin) as the command takes and
// shows it: put's --expires, --pin and --unpin, the LIFETIME column of
// ls -l and log, and the rule every command that writes an existing file
// follows: a write that does not name the lifetime keeps the file's.

package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// lifetime is a file's expiry (zero: never) and pin, as a write stores
// them (store.WriteRequest.ExpiresAt and Pinned).
type lifetime struct {
	expires time.Time
	pinned  bool
}

// lifetimeOf is the lifetime of f; the zero lifetime for nil (no file).
func lifetimeOf(f *store.File) lifetime {
	if f == nil {
		return lifetime{}
	}
	return lifetime{expires: f.ExpiresAt, pinned: f.Pinned}
}

// request sets r's lifetime to l.
func (l lifetime) request(r store.WriteRequest) store.WriteRequest {
	r.ExpiresAt, r.Pinned = l.expires, l.pinned
	return r
}

// equal reports whether l and o are the same lifetime (the same instant,
// whatever the location).
func (l lifetime) equal(o lifetime) bool {
	return l.pinned == o.pinned && l.expires.Equal(o.expires)
}

// String is the LIFETIME column of ls -l and log: "pinned", "expires"
// and the expiry in RFC 3339 (UTC, to the second, as log's TIME column:
// an expiry of seconds shows), or "-".
func (l lifetime) String() string {
	switch {
	case l.pinned:
		return "pinned"
	case !l.expires.IsZero():
		return "expires " + l.expires.UTC().Format(time.RFC3339)
	}
	return "-"
}

// jsonExpiry is an expiry as the JSON lines of ls and log carry it: RFC
// 3339 in UTC, "" (omitted) for never.
func jsonExpiry(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// lifetimeFlags are put's --expires, --pin and --unpin.
type lifetimeFlags struct {
	expires      string
	pin, unpin   bool
	expiresGiven bool
}

// add adds the flags to c.
func (f *lifetimeFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.expires, "expires", "", "give the file an expiry: a duration from now (`7d`, 2w, 12h, 90m), a date (2026-12-31: kept through that day, UTC), an RFC 3339 time, or never (remove it)")
	c.Flags().BoolVar(&f.pin, "pin", false, "pin the file: it never expires, and the notebook lists it first (removes an expiry it has)")
	c.Flags().BoolVar(&f.unpin, "unpin", false, "unpin the file")
}

// check refuses, as a usage error, the combinations that say two things
// at once and an --expires it cannot read (an empty one too), before the
// store is opened.
func (f *lifetimeFlags) check(c *cobra.Command) error {
	f.expiresGiven = c.Flags().Changed("expires")
	switch {
	case f.pin && f.unpin:
		return usagef("%s: give --pin or --unpin, not both", c.Name())
	case f.pin && f.expiresGiven:
		return usagef("%s: give --pin or --expires, not both: a pinned file never expires (to pin a file that expires, --pin alone removes its expiry)", c.Name())
	}
	if f.expiresGiven {
		if _, err := memory.ParseExpiry(f.expires, time.Now()); err != nil {
			return expiryErr(c.Name(), err)
		}
	}
	return nil
}

// apply returns the lifetime a write stores over cur, the file's lifetime
// now (the zero lifetime when it is absent): cur's, but for what the
// flags change; now is the store's clock (store.Store.Now), which a
// duration starts from. An expiry for a file that stays pinned is refused:
// the flags must say --unpin too.
func (f *lifetimeFlags) apply(p string, cur lifetime, now time.Time) (lifetime, error) {
	l := cur
	if f.unpin {
		l.pinned = false
	}
	if f.pin {
		l = lifetime{pinned: true} // a pinned file never expires
	}
	if f.expiresGiven {
		at, err := memory.ParseExpiry(f.expires, now)
		if err != nil {
			return lifetime{}, expiryErr("put", err)
		}
		if l.pinned && !at.IsZero() {
			return lifetime{}, withCode(exitUsage, quiet(store.ErrInvalidLifetime, "%s is pinned, so it never expires; nothing was written: pass --unpin with --expires", p))
		}
		l.expires = at
	}
	return l, nil
}

// expiryErr is the usage error (exit 2) of an --expires that
// memory.ParseExpiry refused with err, still wrapping
// store.ErrInvalidLifetime.
func expiryErr(cmd string, err error) error {
	return withCode(exitUsage, quiet(err, "%s: --expires: %s", cmd, strings.TrimPrefix(err.Error(), store.ErrInvalidLifetime.Error()+": ")))
}
