package contract_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"regexp"
	"strings"
	"testing"
)

// staleLinksLeft are doc links known to name nothing, in files another
// change is moving (issue 37: core/store's search files); the lead removes
// an entry once its link is fixed. TestDocLinksResolve fails on a listed
// link that is gone, so the list only shrinks.
var staleLinksLeft = map[string]bool{}

// docLink is a doc link as go doc reads them: [Name], [Name.Member],
// [pkg.Name], [pkg.Name.Member], optionally with a leading "*".
var docLink = regexp.MustCompile(`\[\*?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\]`)

// goPackage is what a doc link can name in one package: its top-level
// names, its types' methods and fields (Type.Member), and the local
// names of its files' imports.
type goPackage struct {
	name    string
	names   map[string]bool
	imports map[string]bool
	files   map[string]*ast.File
}

// TestDocLinksResolve fails when a doc comment of non-test code has a
// link that names nothing: no declaration of its package, no imported
// package, no name of a package of this repository it qualifies. Links to
// packages outside the repository are trusted; text in a code block
// (indented) is not read.
func TestDocLinksResolve(t *testing.T) {
	pkgs := map[string]*goPackage{}
	walkGo(t, false, func(rel string, _ *token.FileSet, f *ast.File) {
		dir := path.Dir(rel)
		p := pkgs[dir]
		if p == nil {
			p = &goPackage{name: f.Name.Name, names: map[string]bool{}, imports: map[string]bool{}, files: map[string]*ast.File{}}
			pkgs[dir] = p
		}
		p.files[rel] = f
		for _, im := range f.Imports {
			ip := strings.Trim(im.Path.Value, `"`)
			name := path.Base(ip)
			if im.Name != nil {
				name = im.Name.Name
			}
			p.imports[name] = true
		}
		declNames(p.names, f)
	})
	byName := map[string][]*goPackage{}
	for _, p := range pkgs {
		byName[p.name] = append(byName[p.name], p)
	}
	found := map[string]bool{}
	for _, p := range pkgs {
		for rel, f := range p.files {
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					for line := range strings.SplitSeq(c.Text, "\n") {
						if body, ok := strings.CutPrefix(line, "//"); ok && (strings.HasPrefix(body, "\t") || strings.HasPrefix(body, "  ")) {
							continue // a code block
						}
						for _, m := range docLink.FindAllStringSubmatchIndex(line, -1) {
							if m[1] < len(line) && (line[m[1]] == '(' || line[m[1]] == ':' || line[m[1]] == '[') ||
								m[0] > 0 && (isWordByte(line[m[0]-1]) || line[m[0]-1] == ']') {
								continue // a Markdown link, an index expression
							}
							sym := line[m[2]:m[3]]
							if resolves(p, sym, byName) {
								continue
							}
							key := fmt.Sprintf("%s: [%s]", rel, sym)
							found[key] = true
							if !staleLinksLeft[key] {
								t.Errorf("%s: the doc link [%s] names nothing: link what is declared ([Type.Method], [pkg.Name]) or drop the brackets", rel, sym)
							}
						}
					}
				}
			}
		}
	}
	for key := range staleLinksLeft {
		if !found[key] {
			t.Errorf("staleLinksLeft lists %s, which is fixed or gone: remove the entry", key)
		}
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// declNames adds f's top-level names and its types' members to names.
func declNames(names map[string]bool, f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				names[d.Name.Name] = true
				continue
			}
			t := d.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			switch x := t.(type) {
			case *ast.IndexExpr:
				t = x.X
			case *ast.IndexListExpr:
				t = x.X
			}
			if id, ok := t.(*ast.Ident); ok {
				names[id.Name+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch s := sp.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
					members(names, s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
}

// members adds the fields (embedded ones by their type's name) and
// interface methods of type tname.
func members(names map[string]bool, tname string, t ast.Expr) {
	switch tt := t.(type) {
	case *ast.StructType:
		for _, fld := range tt.Fields.List {
			for _, n := range fld.Names {
				names[tname+"."+n.Name] = true
			}
			if len(fld.Names) == 0 {
				e := fld.Type
				if s, ok := e.(*ast.StarExpr); ok {
					e = s.X
				}
				switch x := e.(type) {
				case *ast.Ident:
					names[tname+"."+x.Name] = true
				case *ast.SelectorExpr:
					names[tname+"."+x.Sel.Name] = true
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range tt.Methods.List {
			for _, n := range m.Names {
				names[tname+"."+n.Name] = true
			}
		}
	}
}

// resolves reports whether sym, in a doc comment of p, names something.
func resolves(p *goPackage, sym string, byName map[string][]*goPackage) bool {
	if p.names[sym] {
		return true
	}
	parts := strings.Split(sym, ".")
	if len(parts) == 1 {
		return p.imports[sym] || sym == "error" || sym == "any" || sym == "nil"
	}
	if p.names[parts[0]] && !p.imports[parts[0]] {
		return false // a member the type does not declare
	}
	if !p.imports[parts[0]] {
		return false
	}
	repo := byName[parts[0]]
	if len(repo) == 0 {
		return true // a package outside the repository
	}
	rest := strings.Join(parts[1:], ".")
	for _, q := range repo {
		if q.names[rest] {
			return true
		}
	}
	return false
}
