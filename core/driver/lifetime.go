// A file's lifetime: its expiry and its pin, which the store keeps in the
// file's metadata under keys of its own.

package driver

import (
	"encoding/json"
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
// else give the zero time. It reads the fixed layout directly, without
// time.Parse (a listing parses one per file).
func ParseExpiry(s string) time.Time {
	if len(s) != len(expiryLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}
	}
	// Each digit as a byte less '0': anything else wraps past 9.
	y0, y1, y2, y3 := s[0]-'0', s[1]-'0', s[2]-'0', s[3]-'0'
	mo0, mo1, d0, d1 := s[5]-'0', s[6]-'0', s[8]-'0', s[9]-'0'
	h0, h1, mi0, mi1, s0, s1 := s[11]-'0', s[12]-'0', s[14]-'0', s[15]-'0', s[17]-'0', s[18]-'0'
	ms0, ms1, ms2 := s[20]-'0', s[21]-'0', s[22]-'0'
	if max(y0, y1, y2, y3, mo0, mo1, d0, d1, h0, h1, mi0, mi1, s0, s1, ms0, ms1, ms2) > 9 {
		return time.Time{}
	}
	y := int(y0)*1000 + int(y1)*100 + int(y2)*10 + int(y3)
	mo, day := int(mo0)*10+int(mo1), int(d0)*10+int(d1)
	h, mi, sec := int(h0)*10+int(h1), int(mi0)*10+int(mi1), int(s0)*10+int(s1)
	ms := int(ms0)*100 + int(ms1)*10 + int(ms2)
	if mo < 1 || mo > 12 || day < 1 || day > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}
	}
	secs := daysFromCivil(y, mo, day)*86400 + int64(h*3600+mi*60+sec)
	return time.Unix(secs, int64(ms)*int64(time.Millisecond)).UTC()
}

// daysIn is the number of days of month mo (1–12) of year y.
func daysIn(y, mo int) int {
	switch mo {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-mo-d in the
// proleptic Gregorian calendar (y >= 0).
func daysFromCivil(y, mo, d int) int64 {
	if mo <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (mo + 9) % 12 // March = 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
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

// LifetimeOfJSON returns the lifetime held in metadata encoded as a JSON
// object of strings (as encoding/json writes a map[string]string: keys
// unescaped, no space), for drivers that keep metadata as one JSON text
// and list it beside each path. It finds the two keys without decoding
// the object, and decodes it only when a key is there but its value is
// not plain text; "" is no metadata.
func LifetimeOfJSON(md string) (Lifetime, error) {
	if !strings.Contains(md, `"`+StoreKeyPrefix) {
		return Lifetime{}, nil
	}
	var l Lifetime
	for _, f := range [...]struct {
		key string
		v   *string
	}{{ExpiresKey, &l.Expires}, {PinnedKey, &l.Pinned}} {
		v, ok := plainValue(md, f.key)
		if !ok {
			var m map[string]string
			if err := json.Unmarshal([]byte(md), &m); err != nil {
				return Lifetime{}, err
			}
			return LifetimeOf(m), nil
		}
		*f.v = v
	}
	return l, nil
}

// plainValue finds "key":"value" in a JSON object's text, the key after
// "{" or ",", and returns the value when it holds no escape; ok is false
// when the key is there in some other form (decode the object then).
func plainValue(md, key string) (string, bool) {
	pat := `"` + key + `":"`
	for from := 0; ; {
		i := strings.Index(md[from:], pat)
		if i < 0 {
			return "", !strings.Contains(md, `"`+key+`"`) // absent, unless written otherwise
		}
		i += from
		if i > 0 && (md[i-1] == '{' || md[i-1] == ',') {
			rest := md[i+len(pat):]
			j := strings.IndexByte(rest, '"')
			if j < 0 || strings.IndexByte(rest[:j], '\\') >= 0 {
				return "", false
			}
			return rest[:j], true
		}
		from = i + 1 // inside a value
	}
}
