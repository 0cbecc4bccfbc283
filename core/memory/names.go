package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/core/memory/internal/notes"
)

// A file name reaches one file only. normalizeName makes the spellings the
// model means the same (".MD" is ".md"; any case of MEMORY.md is
// MainFile); beyond that, names are case-sensitive in every store, and a
// name that differs from an existing file's only in letter case would be a
// second notebook beside it (on a case-insensitive file system, the same
// file under two names). So when a tool finds no file at the exact name it
// looks for such a variant, and names it in its refusal instead of creating
// the variant (write_memory) or reporting nothing there (read_memory,
// delete_memory). The look costs a listing only then, never when the file
// exists or for MainFile.

// caseVariant returns the name of a notebook file of sc (ending in ".md")
// that differs from name only in letter case, or "" when there is none. It
// lists the scope's paths that begin as name does up to its first letter,
// in both cases of that letter: two listings of at most MaxSearchFiles
// paths each, issued together (one round trip).
func (m *Memory) caseVariant(ctx context.Context, sc scope, name string) (string, error) {
	if name == MainFile {
		return "", nil
	}
	prefix := sc.path + "/"
	prefixes := variantPrefixes(name)
	listed := make([][]string, len(prefixes))
	errs := make([]error, len(prefixes))
	var wg sync.WaitGroup
	for i, p := range prefixes {
		wg.Go(func() { listed[i], errs[i] = m.s.ListPaths(ctx, prefix+p, m.limits.MaxSearchFiles) })
	}
	wg.Wait()
	for i := range prefixes {
		if errs[i] != nil {
			return "", errs[i]
		}
		for _, path := range listed[i] {
			other, ok := strings.CutPrefix(path, prefix)
			if ok && other != name && strings.EqualFold(other, name) && strings.HasSuffix(other, ".md") && notes.ValidName(other) {
				return other, nil
			}
		}
	}
	return "", nil
}

// variantPrefixes returns name up to and including its first ASCII letter,
// with that letter in lower and in upper case: every case variant of name
// starts with one of the two. A valid name is ASCII and ends in ".md", so
// it has a letter.
func variantPrefixes(name string) []string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if lo, up := c|0x20, c&^0x20; lo >= 'a' && lo <= 'z' {
			return []string{name[:i] + string(rune(lo)), name[:i] + string(rune(up))}
		}
	}
	return nil
}

// variantMsg is the refusal of a name whose case variant other exists.
func variantMsg(name, other, fix string) string {
	return fmt.Sprintf("There is no memory file %q, but there is %q, whose name differs only in letter case; "+
		"file names are case-sensitive, so %s.", name, other, fix)
}
