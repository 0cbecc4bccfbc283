package anthropic

import (
	"fmt"
	"net/url"
	"strings"

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
	segs  []string // segments below /memories; none for the root
	store string   // store path (the folder's path, without "/", for the root)
}

func (t target) isRoot() bool { return len(t.segs) == 0 }

// prefix is the listing prefix of the folder t names.
func (t target) prefix() string { return t.store + "/" }

// display is the model path of a store path below root.
func (l layout) display(storePath string) string {
	return Root + strings.TrimPrefix(storePath, l.root())
}

// resolve checks a model path and maps it to the store. The returned
// string is the tool error text when the path is refused.
//
// Rules: the path is /memories or starts with /memories/; empty and "."
// segments are skipped (as a file system would); a ".." segment, a
// backslash next to "..", and any percent-encoded form of them is refused
// as an escape; every other segment must be a valid store segment
// ([A-Za-z0-9_.-], at most 200 characters, no "..", not starting with
// ".agentmem").
func (l layout) resolve(p string) (target, string) {
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return target{}, fmt.Sprintf("Path must start with /memories, got: %s", p)
	}
	if escapes(p) {
		return target{}, fmt.Sprintf("Path %s would escape /memories directory", p)
	}
	var segs []string
	for seg := range strings.SplitSeq(p[len(Root):], "/") {
		if seg == "" || seg == "." {
			continue
		}
		if store.ValidatePath(seg) != nil {
			return target{}, fmt.Sprintf("The path %s is not a valid memory path: use names of letters, digits, "+
				"'.', '-' and '_' (at most %d characters each).", p, store.MaxSegmentChars)
		}
		segs = append(segs, seg)
	}
	sp := l.root()
	if len(segs) > 0 {
		sp += "/" + strings.Join(segs, "/")
	}
	return target{model: p, segs: segs, store: sp}, ""
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
