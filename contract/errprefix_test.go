package contract_test

import (
	"go/ast"
	"go/token"
	"path"
	"regexp"
	"strconv"
	"testing"
)

// errPrefix matches a leading "word: " or "word/word: " of an error text.
var errPrefix = regexp.MustCompile(`^([a-z][a-z0-9_]*(?:/[a-z][a-z0-9_]*)?): `)

// TestErrorPrefixes checks the error-prefix rule of docs/conventions.md over
// every module of the repository: an errors.New text or fmt.Errorf format
// that starts with a "word: " prefix names the package that makes it, except
// that core/store and core/driver say "agentmem: ", and a package main says
// its command's name (the folder's name: "agentmem: " for cmd/agentmem).
func TestErrorPrefixes(t *testing.T) {
	checked := map[string]bool{} // the prefixes seen that follow the rule
	walkGo(t, false, func(rel string, fset *token.FileSet, f *ast.File) {
		want := wantPrefix(path.Dir(rel), f.Name.Name)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 || !isErrorCall(call.Fun) {
				return true
			}
			text, ok := leadingString(call.Args[0])
			if !ok {
				return true
			}
			m := errPrefix.FindStringSubmatch(text)
			if m != nil && m[1] == want {
				checked[want] = true
			} else if m != nil {
				t.Errorf("%s: error text %q starts with %q; the rule wants %q (docs/conventions.md)",
					fset.Position(call.Args[0].Pos()), text, m[1]+": ", want+": ")
			}
			return true
		})
	})
	// The walk must have reached the packages the exceptions are for.
	if !checked["agentmem"] || !checked["memory"] {
		t.Errorf("no errors.New or fmt.Errorf prefixed agentmem: or memory: seen: did the walk miss core?")
	}
}

// wantPrefix is the prefix the rule asks of errors made in the package
// named pkg in folder dir (relative to the repository root).
func wantPrefix(dir, pkg string) string {
	switch {
	case dir == "core/store" || dir == "core/driver":
		return "agentmem"
	case pkg == "main":
		return path.Base(dir)
	}
	return pkg
}

// isErrorCall reports whether fun is errors.New or fmt.Errorf.
func isErrorCall(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	return id.Name == "errors" && sel.Sel.Name == "New" || id.Name == "fmt" && sel.Sel.Name == "Errorf"
}

// leadingString is the value of the string literal an expression starts
// with (the leftmost operand of a concatenation).
func leadingString(e ast.Expr) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.BinaryExpr:
			e = x.X
			continue
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
		return "", false
	}
}
