package driver

import (
	"testing"
	"time"
)

// TestExpiryFormat checks that FormatExpiry's text parses back to the
// same millisecond, orders as the times do, and that anything else parses
// to the zero time.
func TestExpiryFormat(t *testing.T) {
	times := []time.Time{
		time.Date(1999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(2026, 2, 28, 0, 0, 0, 0, time.FixedZone("x", 3600)),
		time.Date(2026, 12, 2, 10, 11, 12, 345_678_901, time.UTC),
		time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i, at := range times {
		s := FormatExpiry(at)
		if got := ParseExpiry(s); !got.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("ParseExpiry(%q) = %v, want %v", s, got, at.Truncate(time.Millisecond))
		}
		if i > 0 && !(FormatExpiry(times[i-1]) < s) {
			t.Errorf("%q does not sort after %q", s, FormatExpiry(times[i-1]))
		}
	}
	for _, s := range []string{"", "2026-12-02", "2026-12-02T10:11:12Z", "2026-02-30T00:00:00.000Z", "2026-12-02T24:00:00.000Z",
		"2026-12-02T10:11:12.345+", "20x6-12-02T10:11:12.345Z", "2026-12-02 10:11:12.345Z"} {
		if got := ParseExpiry(s); !got.IsZero() {
			t.Errorf("ParseExpiry(%q) = %v, want the zero time", s, got)
		}
	}
	l := Lifetime{Expires: FormatExpiry(times[2])}
	if l.ExpiredAt(times[2].Add(-time.Second)) || !l.ExpiredAt(times[2]) || (Lifetime{}).ExpiredAt(times[3]) {
		t.Error("ExpiredAt: an expiry holds until its instant, and no expiry never expires")
	}
	kept := KeepLifetime(map[string]string{"a": "1", ExpiresKey: "x"}, map[string]string{PinnedKey: "true", "b": "2"})
	if len(kept) != 2 || kept["a"] != "1" || kept[PinnedKey] != "true" {
		t.Errorf("KeepLifetime = %v, want the new metadata with the old lifetime only", kept)
	}
	if KeepLifetime(nil, map[string]string{"b": "2"}) != nil {
		t.Error("KeepLifetime of nothing is not nil")
	}
}
