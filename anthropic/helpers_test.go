package anthropic

import (
	"sort"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

// backend opens a fresh, empty driver.
type backend struct {
	name string
	open func(t *testing.T) driver.Driver
}

var backends = []backend{
	{"memstore", func(t *testing.T) driver.Driver { return newMemDriver(t) }},
	{"filestore", func(t *testing.T) driver.Driver {
		d, err := filestore.New(t.Context(), t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}},
}

func newTool(t *testing.T, s *store.Store) *Tool {
	t.Helper()
	tl, err := New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// keepOpen stops a store from closing a driver it shares with others.
type keepOpen struct{ driver.Driver }

func (keepOpen) Close() error { return nil }

// files returns every store file below prefix, path → content.
func files(t *testing.T, s *store.Store, prefix string) map[string]string {
	t.Helper()
	ps, err := s.ListPaths(t.Context(), prefix, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		f, err := s.Read(t.Context(), p, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = f.Content
	}
	return out
}

func dump(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		b.WriteString(k + " = " + m[k] + "\n")
	}
	return b.String()
}

func exec(t *testing.T, tl *Tool, ns, id string, c Command) Result {
	t.Helper()
	r, err := tl.Execute(t.Context(), ns, id, c)
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	return r
}
