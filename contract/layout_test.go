package contract_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// backendDirs are the backend packages and the file each names after
// itself, relative to the repository root.
var backendDirs = map[string]string{
	"core/memstore":  "memstore.go",
	"core/filestore": "filestore.go",
	"sqlite":         "sqlite.go",
	"postgres":       "postgres.go",
	"dynamodb":       "dynamodb.go",
	"firestore":      "firestore.go",
	"cosmosdb":       "cosmosdb.go",
}

// Every backend keeps the same files (docs/conventions.md): the required
// ones always, the optional ones when it has what they hold, and no other.
var (
	layoutRequired = []string{"doc.go", "url.go", "primitives.go", "read.go", "history.go"}
	layoutOptional = []string{"mutate.go", "append.go", "prune.go", "schema.go", "errors.go"}
)

// TestBackendLayout fails when a backend's non-test files leave the
// shared layout, or when its package doc is not alone in doc.go.
func TestBackendLayout(t *testing.T) {
	for dir, own := range backendDirs {
		entries, err := os.ReadDir(filepath.Join("..", dir))
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			have = append(have, n)
			if !layoutName(n, own, filepath.Join("..", dir, n)) {
				t.Errorf("%s/%s: not a backend file name: move its code into %s, one of %s or %s (docs/conventions.md)",
					dir, n, own, strings.Join(layoutRequired, ", "), strings.Join(layoutOptional, ", "))
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", dir, n), nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			if n == "doc.go" && f.Doc == nil {
				t.Errorf("%s/doc.go has no package doc comment", dir)
			}
			if n != "doc.go" && f.Doc != nil {
				t.Errorf("%s/%s has a package doc comment: it belongs in doc.go alone", dir, n)
			}
		}
		for _, n := range append([]string{own}, layoutRequired...) {
			if !slices.Contains(have, n) {
				t.Errorf("%s: %s is missing (docs/conventions.md lists the backend files)", dir, n)
			}
		}
	}
}

// layoutName reports whether n is a backend file name: own, a required or
// an optional name, or one of those with a _TAG suffix in a file that has a
// build constraint (filestore_unix.go beside filestore_other.go).
func layoutName(n, own, path string) bool {
	allowed := append(append([]string{own}, layoutRequired...), layoutOptional...)
	if slices.Contains(allowed, n) {
		return true
	}
	src, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(src), "\n//go:build ") && !strings.HasPrefix(string(src), "//go:build ") {
		return false
	}
	for _, a := range allowed {
		if strings.HasPrefix(n, strings.TrimSuffix(a, ".go")+"_") {
			return true
		}
	}
	return false
}

// TestDocGoHoldsOnlyTheDoc fails when a backend's doc.go declares
// anything: it holds the package doc and the package clause.
func TestDocGoHoldsOnlyTheDoc(t *testing.T) {
	for dir := range backendDirs {
		p := filepath.Join("..", dir, "doc.go")
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			if os.IsNotExist(err) {
				continue // TestBackendLayout reports it
			}
			t.Fatal(err)
		}
		if len(f.Decls) > 0 {
			t.Errorf("%s/doc.go declares %d things: move them to %s", dir, len(f.Decls), backendDirs[dir])
		}
	}
}
