package contract_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// deprecatedLeft are the files still allowed a deprecation notice, with
// how many (docs/conventions.md, "No deprecated names"). The lead removes
// an entry once its names are gone; TestNoDeprecatedNames fails on an
// entry whose file has fewer notices than listed, so the list only
// shrinks.
var deprecatedLeft = map[string]int{
	// URLError, CheckQuery and URLFilePath: aliases of core/driver's
	// (issue 37, with the store's API changes).
	"core/store/url.go": 3,
}

// TestNoDeprecatedNames fails when a Go file outside testdata has a
// comment paragraph that starts with "Deprecated:" (Go's deprecation
// notice): the project has no release whose names it must keep.
func TestNoDeprecatedNames(t *testing.T) {
	found := map[string]int{}
	walkGo(t, true, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, g := range f.Comments {
			for _, c := range g.List {
				for line := range strings.SplitSeq(c.Text, "\n") {
					line = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(line, "//"), "/*"), "*"))
					if !strings.HasPrefix(line, "Deprecated:") {
						continue
					}
					found[rel]++
					if found[rel] > deprecatedLeft[rel] {
						t.Errorf("%s: a deprecated name: remove it and update its callers, the docs and CHANGELOG.md (docs/conventions.md)", fset.Position(c.Pos()))
					}
				}
			}
		}
	})
	for rel, n := range deprecatedLeft {
		if found[rel] < n {
			t.Errorf("%s has %d deprecation notices, deprecatedLeft allows %d: lower or remove its entry", rel, found[rel], n)
		}
	}
}

// walkGo parses every Go file of the repository outside hidden folders,
// node_modules and testdata (test files too when tests is set; generated
// files never) and calls fn with its slash path relative to the root.
func walkGo(t *testing.T, tests bool, fn func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root := ".."
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") && p != root || e.Name() == "node_modules" || e.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || !tests && strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
