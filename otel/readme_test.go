package otel

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// readmeSection returns the text of README.md from the line "## title" to
// the next "## ".
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", title)
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s
}

// storeOps returns the values of the constants of type store.Op, read from
// the source of package store (found through the file store.New is
// compiled from): every operation the store reports to its Observer, so
// every store span name.
func storeOps(t *testing.T) []string {
	t.Helper()
	file, _ := runtime.FuncForPC(reflect.ValueOf(store.New).Pointer()).FileLine(reflect.ValueOf(store.New).Pointer())
	dir := filepath.Dir(file)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Op" {
					continue
				}
				for _, val := range v.Values {
					if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						ops = append(ops, "store."+s)
					}
				}
			}
		}
	}
	if len(ops) == 0 {
		t.Fatalf("no constants of type Op in %s", dir)
	}
	slices.Sort(ops)
	return ops
}

var (
	backticked    = regexp.MustCompile("`([^`]+)`")
	storeSpanName = regexp.MustCompile(`^store\.[A-Z][A-Za-z]*$`)
)

func names(s string, keep func(string) bool) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		if keep(m[1]) && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

func diff(t *testing.T, what string, readme, code []string) {
	t.Helper()
	var missing, extra []string
	for _, n := range code {
		if !slices.Contains(readme, n) {
			missing = append(missing, n)
		}
	}
	for _, n := range readme {
		if !slices.Contains(code, n) {
			extra = append(extra, n)
		}
	}
	if len(missing)+len(extra) > 0 {
		t.Errorf("README.md's %s: missing %v, names what the code does not emit %v", what, missing, extra)
	}
}

// TestREADMENamesEverySpan fails when README.md's lists of span names
// differ from the names the code gives: the driver calls (db.operation.name)
// and the store operations (store.{operation}).
func TestREADMENamesEverySpan(t *testing.T) {
	sec := readmeSection(t, "Backend requests: the stable database conventions")
	var row string
	for _, l := range strings.Split(sec, "\n") {
		if strings.HasPrefix(l, "| `db.operation.name` |") {
			row = strings.TrimPrefix(l, "| `db.operation.name` |")
		}
	}
	if row == "" {
		t.Fatal("README.md has no db.operation.name row")
	}
	diff(t, "db.operation.name values", names(row, func(string) bool { return true }), slices.Sorted(slices.Values(opNames[:])))

	sec = readmeSection(t, "Store operations")
	intro, _, _ := strings.Cut(sec, "\n|")
	diff(t, "store span names", names(intro, storeSpanName.MatchString), storeOps(t))
}
