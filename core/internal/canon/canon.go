// Package canon encodes values as canonical JSON: keys sorted by code
// point, no whitespace, every non-ASCII code point and DEL escaped as \uxxxx
// (astral code points as UTF-16 surrogate pairs), and "/", "<", ">", "&"
// left as they are. It is byte-for-byte what Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
// produces, so operation ids match the reference implementation's.
package canon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Encode returns the canonical JSON of v. v may be nil, a string, a bool, an
// int, a map[string]any, a map[string]string or a []any of those.
func Encode(v any) string {
	var b strings.Builder
	encode(&b, v, true)
	return b.String()
}

// EncodeText is Encode without ASCII escaping: non-ASCII code points stay
// as they are, so its rune count is what a person sees.
func EncodeText(v any) string {
	var b strings.Builder
	encode(&b, v, false)
	return b.String()
}

// Hash returns the lower-case hex SHA-256 of Encode(v).
func Hash(v any) string {
	sum := sha256.Sum256([]byte(Encode(v)))
	return hex.EncodeToString(sum[:])
}

func encode(b *strings.Builder, v any, ascii bool) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		quote(b, x, ascii)
	case *string:
		if x == nil {
			b.WriteString("null")
		} else {
			quote(b, *x, ascii)
		}
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = v
		}
		encode(b, m, ascii)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			quote(b, k, ascii)
			b.WriteByte(':')
			encode(b, x[k], ascii)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encode(b, e, ascii)
		}
		b.WriteByte(']')
	default:
		panic(fmt.Sprintf("canon: unsupported type %T", v))
	}
}

func quote(b *strings.Builder, s string, ascii bool) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(b, `\u%04x`, r)
			case r < 0x7f || !ascii:
				b.WriteRune(r)
			case r > 0xffff:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}
