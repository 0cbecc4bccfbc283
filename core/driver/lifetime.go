// A file's lifetime: its expiry and its pin, which the store keeps in the
// file's metadata under keys of its own.

package driver

import (
	"strings"
	"time"
)

// The metadata keys the store owns. A file's expiry and pin travel in its
// metadata under these keys, so every backend keeps them exactly as it
// keeps metadata (in the row, in history entries, through every
// primitive and fast path); the store refuses them in the metadata a
// caller passes and never shows them as metadata. A driver reads them
// only where its contract says so: [Entry], [ScopeFile] and
// [AppendParams].
const (
	// StoreKeyPrefix starts every key the store owns.
	StoreKeyPrefix = "agentmem:"
	// ExpiresKey holds the file's expiry as [FormatExpiry] writes it:
	// fixed-width UTC, so that two expiries, or an expiry and a time
	// formatted the same way, compare as strings in time order.
	ExpiresKey = StoreKeyPrefix + "expires"
	// PinnedKey holds "true" for a pinned file.
	PinnedKey = StoreKeyPrefix + "pinned"
)

// expiryLayout is RFC 3339 in UTC with milliseconds, always 24 bytes.
const expiryLayout = "2006-01-02T15:04:05.000Z"

// FormatExpiry returns t as the store writes an expiry (and the Now of an
// [AppendParams]): UTC, millisecond precision, fixed width, so that string
// order is time order for the years 0000–9999.
func FormatExpiry(t time.Time) string { return t.UTC().Format(expiryLayout) }

// ParseExpiry parses a value written by [FormatExpiry]; "" and anything
// else give the zero time. It reads the fixed layout directly (listings
// parse one per file).
func ParseExpiry(s string) time.Time {
	if len(s) != len(expiryLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}
	}
	var f [7]int
	for i, span := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 23}} {
		for _, c := range []byte(s[span[0]:span[1]]) {
			if c < '0' || c > '9' {
				return time.Time{}
			}
			f[i] = f[i]*10 + int(c-'0')
		}
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], f[6]*int(time.Millisecond), time.UTC)
	if t.Month() != time.Month(f[1]) || t.Day() != f[2] || f[3] > 23 || f[4] > 59 || f[5] > 59 {
		return time.Time{} // normalised: not a real date
	}
	return t
}

// Lifetime is what a driver reports of a file's lifetime without its
// content: the values of [ExpiresKey] and [PinnedKey] in the row's
// metadata, as stored ("" when absent).
type Lifetime struct {
	// Expires is the value of [ExpiresKey].
	Expires string
	// Pinned is the value of [PinnedKey].
	Pinned string
}

// LifetimeOf returns the lifetime held in metadata m (drivers that keep
// metadata as a map use it for [Entry] and [ScopeFile]).
func LifetimeOf(m map[string]string) Lifetime {
	return Lifetime{Expires: m[ExpiresKey], Pinned: m[PinnedKey]}
}

// ExpiredAt reports whether the lifetime's expiry is at or before now.
func (l Lifetime) ExpiredAt(now time.Time) bool { return l.ExpiredBy(FormatExpiry(now)) }

// ExpiredBy is ExpiredAt for a time written by [FormatExpiry] (an
// [AppendParams].Now): a string comparison.
func (l Lifetime) ExpiredBy(now string) bool { return l.Expires != "" && l.Expires <= now }

// KeepLifetime returns next with the store-owned keys of prev carried
// over: what an [Appender] stores as the appended row's metadata (nil
// when both hold nothing).
func KeepLifetime(next, prev map[string]string) map[string]string {
	var out map[string]string
	for k, v := range next {
		if strings.HasPrefix(k, StoreKeyPrefix) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(next)+2)
		}
		out[k] = v
	}
	for _, k := range [...]string{ExpiresKey, PinnedKey} {
		if v, ok := prev[k]; ok {
			if out == nil {
				out = make(map[string]string, len(next)+2)
			}
			out[k] = v
		}
	}
	return out
}
