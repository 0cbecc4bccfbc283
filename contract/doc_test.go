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

// TestExportedNamesDocumented checks every module of the repository: each
// exported name in non-test code, and each exported field of an exported
// struct, has a doc comment (a field may share its group's comment).
func TestExportedNamesDocumented(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (strings.HasPrefix(e.Name(), ".") && p != root || e.Name() == "node_modules" || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil && exportedRecv(d) {
					t.Errorf("%s: func %s has no doc comment", fset.Position(d.Pos()), d.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() && d.Doc == nil && sp.Doc == nil {
							t.Errorf("%s: type %s has no doc comment", fset.Position(sp.Pos()), sp.Name)
						}
						if st, ok := sp.Type.(*ast.StructType); ok && sp.Name.IsExported() {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									if n.IsExported() && fld.Doc == nil && fld.Comment == nil {
										t.Errorf("%s: field %s.%s has no doc comment", fset.Position(n.Pos()), sp.Name, n)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() && d.Doc == nil && sp.Doc == nil && sp.Comment == nil {
								t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n)
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func exportedRecv(d *ast.FuncDecl) bool {
	if d.Recv == nil {
		return true
	}
	typ := d.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	id, ok := typ.(*ast.Ident)
	return !ok || id.IsExported()
}
