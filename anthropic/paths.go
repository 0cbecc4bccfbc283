package anthropic

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// Root is the directory the model sees; every path it names lies under it.
const Root = "/memories"

// journalFolder is the folder, beside the namespace's memories folder, that
// holds the journals of multi-step commands (rename, delete of a folder).
const journalFolder = "memories-journal"

// layout maps the model's paths of one namespace to store paths.
type layout struct {
	ns string // escaped namespace: one path segment
}

func newLayout(namespace string) (layout, error) {
	ns := memory.EscapeNamespace(namespace)
	if ns == "" {
		return layout{}, ErrNoNamespace
	}
	return layout{ns: ns}, nil
}

// root is the store folder of /memories, without a trailing "/".
func (l layout) root() string { return l.ns + "/memories" }

// journal is the store path of an operation's journal.
func (l layout) journal(opID string) string { return l.ns + "/" + journalFolder + "/" + opID }

// target is one resolved model path.
type target struct {
	model string   // the path as the model wrote it (used in messages)
	segs  []string // store segments below /memories; none for the root
	store string   // store path (the folder's path, without "/", for the root)
}

func (t target) isRoot() bool { return len(t.segs) == 0 }

// prefix is the listing prefix of the folder t names.
func (t target) prefix() string { return t.store + "/" }

// display is the model path of a store path below root: each segment
// decoded (see memoryName).
func (l layout) display(storePath string) string {
	rest := strings.TrimPrefix(storePath, l.root())
	var b strings.Builder
	b.WriteString(Root)
	for seg := range strings.SplitSeq(strings.TrimPrefix(rest, "/"), "/") {
		if seg != "" {
			b.WriteString("/" + memoryName(seg))
		}
	}
	return b.String()
}

// resolve checks a model path and maps it to the store. The returned
// string is the tool error text when the path is refused.
//
// Rules: the path is /memories or starts with /memories/; empty and "."
// segments are skipped (as a file system would); a ".." segment, a
// backslash next to "..", and any percent-encoded form of them is refused
// as an escape; every other name is mapped to a store segment by
// storeName, which must fit in store.MaxSegmentChars characters.
func (l layout) resolve(p string) (target, string) {
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return target{}, fmt.Sprintf("Path must start with /memories, got: %s", p)
	}
	if escapes(p) {
		return target{}, fmt.Sprintf("Path %s would escape /memories directory", p)
	}
	if !utf8.ValidString(p) {
		return target{}, fmt.Sprintf("The path %s is not a valid memory path: it is not valid UTF-8.", p)
	}
	var segs []string
	for seg := range strings.SplitSeq(p[len(Root):], "/") {
		if seg == "" || seg == "." {
			continue
		}
		s := storeName(seg)
		if n := utf8.RuneCountInString(s); n > store.MaxSegmentChars {
			return target{}, fmt.Sprintf("The path %s is not a valid memory path: the name %s is too long "+
				"(stored, it takes %d characters, at most %d are allowed); use a shorter name.",
				p, seg, n, store.MaxSegmentChars)
		}
		segs = append(segs, s)
	}
	sp := l.root()
	if len(segs) > 0 {
		sp += "/" + strings.Join(segs, "/")
	}
	return target{model: p, segs: segs, store: sp}, ""
}

// StorePath returns the store path that holds the memory path p (a path
// the model writes, such as "/memories/café notes.md") of namespace. It
// fails with ErrNoNamespace, or with an error wrapping store.ErrInvalidPath
// (its text is the tool's refusal) when the tool would refuse p.
func StorePath(namespace, p string) (string, error) {
	l, err := newLayout(namespace)
	if err != nil {
		return "", err
	}
	tg, msg := l.resolve(p)
	if msg != "" {
		return "", fmt.Errorf("%w: %s", store.ErrInvalidPath, msg)
	}
	return tg.store, nil
}

// escapeMark starts every encoded store segment.
const escapeMark = "--"

// storeName maps one memory name (valid UTF-8, no "/", not "", "." or
// "..") to a store segment. A valid store segment is its own store name,
// unless it is itself the encoding of another name; every other name is
// encoded: escapeMark, then the name with ASCII letters, digits, '_' and
// '.' (but not a second '.' in a row) kept and every other character
// written as "-xx" (code points below U+0100), "-uxxxx" (below U+10000) or
// "-Uxxxxxx", in lower-case hex. So "café notes.md" is stored as
// "--caf-e9-20notes.md". The mapping is injective and stable, and
// memoryName inverts it; the result may be longer than
// store.MaxSegmentChars.
func storeName(name string) string {
	if store.ValidatePath(name) == nil && !strings.Contains(name, "/") {
		if _, encoded := decodedName(name); !encoded {
			return name
		}
	}
	var b strings.Builder
	b.WriteString(escapeMark)
	prev := byte('-')
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf && isKept(byte(r)) && !(r == '.' && prev == '.'):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, "-%02x", r)
		case r < 0x10000:
			fmt.Fprintf(&b, "-u%04x", r)
		default:
			fmt.Fprintf(&b, "-U%06x", r)
		}
		s := b.String()
		prev = s[len(s)-1]
	}
	return b.String()
}

// isKept reports whether c stands for itself in an encoded name.
func isKept(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// memoryName is the memory name of a store segment: the name it encodes
// (see storeName), or the segment itself.
func memoryName(seg string) string {
	if name, ok := decodedName(seg); ok {
		return name
	}
	return seg
}

// decodedName returns the name seg encodes, and whether seg is exactly
// storeName's encoding of that name (any other segment, "--notes" say,
// names itself).
func decodedName(seg string) (string, bool) {
	body, ok := strings.CutPrefix(seg, escapeMark)
	if !ok {
		return "", false
	}
	var out []byte
	for i := 0; i < len(body); {
		c := body[i]
		if isKept(c) {
			out = append(out, c)
			i++
			continue
		}
		if c != '-' || i+1 >= len(body) {
			return "", false
		}
		width, start := 2, i+1
		switch body[i+1] {
		case 'u':
			width, start = 4, i+2
		case 'U':
			width, start = 6, i+2
		}
		if start+width > len(body) {
			return "", false
		}
		var r rune
		for _, h := range []byte(body[start : start+width]) {
			switch {
			case h >= '0' && h <= '9':
				r = r<<4 | rune(h-'0')
			case h >= 'a' && h <= 'f':
				r = r<<4 | rune(h-'a'+10)
			default:
				return "", false
			}
		}
		if !utf8.ValidRune(r) {
			return "", false
		}
		out = utf8.AppendRune(out, r)
		i = start + width
	}
	name := string(out)
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") || storeName(name) != seg {
		return "", false
	}
	return name, true
}

// escapes reports whether p holds a ".." segment, split on "/" or "\",
// as written or after percent-decoding (repeatedly, for double encoding),
// or a NUL.
func escapes(p string) bool {
	for range 4 {
		if strings.ContainsRune(p, 0) {
			return true
		}
		for seg := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			if strings.Trim(seg, " ") == ".." {
				return true
			}
		}
		if !strings.Contains(p, "%") {
			return false
		}
		d, err := url.PathUnescape(p)
		if err != nil {
			// A malformed escape is not a valid segment either; let the
			// segment check refuse it.
			return false
		}
		if d == p {
			return false
		}
		p = d
	}
	return true
}
