package driver

import (
	"encoding/json"
	"math/rand/v2"
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
	// Every millisecond of years 0–9999 parses as time.Parse reads it.
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC).UnixMilli()
	for range 20000 {
		at := time.UnixMilli(lo + r.Int64N(hi-lo+1)).UTC()
		s := FormatExpiry(at)
		want, err := time.Parse(expiryLayout, s)
		if got := ParseExpiry(s); err != nil || !got.Equal(want) || !got.Equal(at) {
			t.Fatalf("ParseExpiry(%q) = %v, want %v (%v)", s, got, want, err)
		}
	}
	for _, s := range []string{"2024-02-29T00:00:00.000Z", "2000-02-29T12:00:00.000Z"} {
		if ParseExpiry(s).IsZero() {
			t.Errorf("ParseExpiry(%q): a leap day is a date", s)
		}
	}
	for _, s := range []string{"2023-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-01T00:00:00.000Z"} {
		if !ParseExpiry(s).IsZero() {
			t.Errorf("ParseExpiry(%q) is not a date", s)
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

// TestLifetimeOfJSON checks the quick reading of a JSON metadata text
// against decoding it, on what encoding/json writes and on texts that
// hide the keys' words in values or in other keys.
func TestLifetimeOfJSON(t *testing.T) {
	for _, m := range []map[string]string{
		nil,
		{"updated_by": "agent"},
		{ExpiresKey: "2026-12-02T10:11:12.345Z", "updated_by": "agent"},
		{PinnedKey: "true", "z": "w"},
		{ExpiresKey: "2026-12-02T10:11:12.345Z", PinnedKey: "true"},
		{"note": `"agentmem:expires":"2000-01-01T00:00:00.000Z"`},
		{"x" + ExpiresKey: "a", "note": "agentmem:pinned"},
		{ExpiresKey: `we"ird\`, "a": "b"},
		{"a": `{"agentmem:pinned":"true"}`, PinnedKey: ""},
	} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			b = nil
		}
		got, err := LifetimeOfJSON(string(b))
		if want := LifetimeOf(m); err != nil || got != want {
			t.Errorf("LifetimeOfJSON(%s) = %+v, %v; want %+v", b, got, err, want)
		}
	}
	if _, err := LifetimeOfJSON(`{"agentmem:pinned":`); err == nil {
		t.Error("a broken text with a store-owned key is not an error")
	}
}
