package contract_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// deprecatedLeft are the files still allowed a deprecation notice, with
// how many (docs/conventions.md, "No deprecated names"). The lead removes
// an entry once its names are gone; TestNoDeprecatedNames fails on an
// entry whose file has fewer notices than listed, so the list only
// shrinks.
var deprecatedLeft = map[string]int{}

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

// maxLines is the most lines a non-test Go file has (docs/conventions.md,
// "File length").
const maxLines = 600

// longDirs are the folders (with their subfolders) whose files the length
// rule does not check yet (issue 37: they are being changed, and split,
// apart); longFiles are single files left over. The lead removes an entry
// once it holds.
var (
	longDirs  = []string{}
	longFiles = map[string]bool{}
)

// TestFileLength fails when a non-test, non-generated Go file outside
// testdata has more than maxLines lines.
func TestFileLength(t *testing.T) {
	seen := map[string]bool{}
	walkGo(t, false, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, d := range longDirs {
			if strings.HasPrefix(rel, d+"/") {
				return
			}
		}
		n := fset.File(f.Pos()).LineCount()
		switch {
		case longFiles[rel]:
			seen[rel] = true
			if n <= maxLines {
				t.Errorf("%s has %d lines, within %d: remove it from longFiles", rel, n, maxLines)
			}
		case n > maxLines:
			t.Errorf("%s has %d lines, over %d: split it along its seams, one file per command, type or step (docs/conventions.md)", rel, n, maxLines)
		}
	})
	for rel := range longFiles {
		if !seen[rel] {
			t.Errorf("longFiles names %s, which is not a Go file of the tree: remove it", rel)
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

// TestModulesListsEveryPackage fails when docs/modules.md does not name a
// package of the repository (a folder with a non-test Go file) by its path,
// as `path` or, for a module's root, `path/`.
func TestModulesListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "modules.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	pkgs := map[string]bool{}
	walkGo(t, false, func(rel string, _ *token.FileSet, _ *ast.File) {
		pkgs[path.Dir(rel)] = true
	})
	for _, p := range []string{"core/store", "core/memory", "cmd/agentmem"} {
		if !pkgs[p] {
			t.Fatalf("the walk found no package %s: %v", p, pkgs)
		}
	}
	for p := range pkgs {
		if !strings.Contains(doc, "`"+p+"`") && !strings.Contains(doc, "`"+p+"/`") {
			t.Errorf("docs/modules.md does not name package %s: add it, as `%s`, to its module's row", p, p)
		}
	}
}

// aroundTheStore are the folders whose non-test code may call
// Store.Driver() (docs/conventions.md, "Nothing goes around the store"):
// the store itself and the notebook.
var aroundTheStore = []string{"core/store", "core/memory"}

// TestNothingGoesAroundTheStore fails when non-test code outside
// aroundTheStore calls a method Driver() with no arguments: what a caller
// needs of the driver (its listings, its name) is a method of the store.
func TestNothingGoesAroundTheStore(t *testing.T) {
	walkGo(t, false, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, d := range aroundTheStore {
			if strings.HasPrefix(rel, d+"/") {
				return
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) != 0 {
				return true
			}
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Driver" {
				t.Errorf("%s: a call of Driver() goes around the store: use (or add) a store method (docs/conventions.md)", fset.Position(c.Pos()))
			}
			return true
		})
	})
}
