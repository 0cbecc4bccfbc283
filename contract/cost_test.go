package contract_test

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestRootSearchSkipsFolders counts the driver calls of a search of the
// root scope over the nine primitives, where nested files are listed and
// thrown away: the store skips a nested folder's whole range at the end of
// each page, so the listing takes at most one call per folder (plus the
// last, short page) instead of one per page of nested paths.
func TestRootSearchSkipsFolders(t *testing.T) {
	const folders, perFolder = 10, 30
	c := contract.NewCounter(contract.Primitives(newMemDriver(t)))
	s := store.New(c, nil)
	defer s.Close()
	for _, p := range []string{"a.md", "m.md", "z.md"} {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: "needle"}); err != nil {
			t.Fatal(err)
		}
	}
	for f := range folders {
		for i := range perFolder {
			p := fmt.Sprintf("f%d/n%02d.md", f, i)
			if _, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: "needle"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Reset()
	res, err := s.Search(t.Context(), search.Request{Query: "needle", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 3 || res.Scanned != 3 {
		t.Fatalf("search = %+v, want the 3 root files", res)
	}
	counts := c.Counts()
	t.Logf("root search over %d folders of %d files: %d requests %v", folders, perFolder, c.Total(), counts)
	if n := counts["ListFiles"]; n > folders+1 {
		t.Fatalf("ListFiles calls = %d, want at most %d (one per nested folder, plus the last page)", n, folders+1)
	}
}
