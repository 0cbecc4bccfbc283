package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The README drift test: every README of the repository (the root's, each
// module's) and every page in docs/ may name only Go identifiers, agentmem
// commands and flags that exist. It reads code spans and fenced blocks
// (HTML comments are skipped: they mark places for text still to come).

// externalNames are qualified names the documents take, without an
// import line, from other projects' packages that share a name with one of
// ours.
var externalNames = map[string]bool{
	"memory.Entry":      true, // google.golang.org/adk/memory
	"memory.Service":    true, // google.golang.org/adk/memory
	"genkit.DefineTool": true, // github.com/firebase/genkit/go/genkit
	"driver.Open":       true, // database/sql/driver's Driver.Open
	"Runner.Resume":     true, // github.com/cloudwego/eino/adk
}

// spanNames are span names of the otel module that read like qualified Go
// names but name none (other store spans, store.Write, name their Store
// method).
var spanNames = map[string]bool{
	"store.Index": true, // a job of the background indexer (store.OpIndex)
}

// goImport matches an import line in a Go code block: an optional alias
// and a path.
var goImport = regexp.MustCompile(`^\s*(?:import\s+)?(\w+\s+)?"([\w.-]+\.[\w.-]+/[^"]+)"`)

// externalQualifiers returns the package names a document imports from
// outside this repository ("github.com/cloudwego/eino/adk" gives adk,
// "github.com/anthropics/anthropic-sdk-go/v2" anthropic): names qualified
// by them that our package of that name lacks are that package's.
func externalQualifiers(codes []code) map[string]bool {
	q := map[string]bool{}
	for _, c := range codes {
		m := goImport.FindStringSubmatch(c.text)
		if m == nil || strings.HasPrefix(m[2], "github.com/agentmem/agentmem") {
			continue
		}
		if alias := strings.TrimSpace(m[1]); alias != "" {
			q[alias] = true
			continue
		}
		elems := strings.Split(m[2], "/")
		base := elems[len(elems)-1]
		if regexp.MustCompile(`^v[0-9]+$`).MatchString(base) && len(elems) > 1 {
			base = elems[len(elems)-2]
		}
		base, _, _ = strings.Cut(base, "-")
		q[base] = true
	}
	return q
}

// TestDocsNameWhatExists fails when a document names a Go identifier
// (store.Open, pruned.AppendSeries, Store.History), an agentmem
// command or a flag that the code does not have.
func TestDocsNameWhatExists(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := docFiles(t, root)
	if len(docs) < 10 {
		t.Fatalf("found %d documents under %s, want the root README, module READMEs and docs/", len(docs), root)
	}
	idx := goIndex(t, root)
	cli := (&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, isTerminal: func(any) bool { return false }}).rootCmd()
	cli.InitDefaultVersionFlag()
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		codes := codeOf(string(b))
		ext := externalQualifiers(codes)
		for _, c := range codes {
			for _, msg := range idx.check(c.text, ext) {
				t.Errorf("%s:%d: %s", rel, c.line, msg)
			}
			for _, msg := range checkCommands(cli, c.text) {
				t.Errorf("%s:%d: %s", rel, c.line, msg)
			}
		}
	}
}

// TestDocsCheckCatchesDrift feeds the checks names that do not exist.
func TestDocsCheckCatchesDrift(t *testing.T) {
	idx := goIndex(t, filepath.Join("..", ".."))
	cli := (&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, isTerminal: func(any) bool { return false }}).rootCmd()
	cli.InitDefaultVersionFlag()
	md := "Open with `store.Open`, then `s.Write`; `pruned.RotateOptions.MaxFiles` rotates.\n" +
		"<!-- `store.NoSuchThing` in a comment is not read -->\n" +
		"```console\n$ agentmem ls kamal/ | head\n$ agentmem serve keygen --user ana --admin\n$ agentmem --version\n```\n"
	for _, c := range codeOf(md) {
		if msgs := append(idx.check(c.text, nil), checkCommands(cli, c.text)...); len(msgs) > 0 {
			t.Errorf("line %d %q: %v", c.line, c.text, msgs)
		}
	}
	for _, bad := range []string{
		"store.OpenStore", "memory.AppendOptions.Rotation", "Store.NoSuchMethod", "sqlite.Options.NoField",
		"agentmem reindexx kamal/", "agentmem ls --no-such-flag", "agentmem serve keygen --usr ana", "agentmem cat -Z PATH",
		"--no-such-flag",
	} {
		if msgs := append(idx.check(bad, nil), checkCommands(cli, bad)...); len(msgs) == 0 {
			t.Errorf("%q: no complaint", bad)
		}
	}
}

// docFiles returns README.md, every module's README.md (one and two
// levels down) and docs/*.md under root.
func docFiles(t *testing.T, root string) []string {
	var out []string
	for _, pat := range []string{"README.md", "*/README.md", "*/*/README.md", "docs/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if !strings.Contains(p, "node_modules") && !strings.Contains(p, ".cache") {
				out = append(out, p)
			}
		}
	}
	return out
}

// code is the text of one code span or one line of a fenced block.
type code struct {
	line int
	text string
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	codeSpan    = regexp.MustCompile("``([^`]+)``|`([^`]+)`")
)

// codeOf returns the code spans and fenced-block lines of Markdown text md.
func codeOf(md string) []code {
	md = htmlComment.ReplaceAllStringFunc(md, func(s string) string {
		return strings.Repeat("\n", strings.Count(s, "\n")) // keep line numbers
	})
	var out []code
	fenced := false
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			out = append(out, code{i + 1, l})
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(l, -1) {
			out = append(out, code{i + 1, m[1] + m[2]})
		}
	}
	return out
}

// index holds the exported names of the repository's packages, by package
// name, and the members (fields, methods) of each exported type, by type
// name, over every package that has one.
type index struct {
	pkgs    map[string]map[string]bool // package name → exported top-level names
	members map[string]map[string]bool // "pkg.Type" and "Type" → member names
}

// goIndex parses every non-test Go file under root.
func goIndex(t *testing.T, root string) *index {
	idx := &index{pkgs: map[string]map[string]bool{}, members: map[string]map[string]bool{}}
	embeds := map[string][]string{} // "pkg.Type" → embedded type names, same package
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	member := func(pkg, typ, name string) {
		add(idx.members, pkg+"."+typ, name)
		add(idx.members, typ, name)
		add(idx.members, pkg+".*", name) // a member of some type of pkg
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && p != root && (strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		if pkg == "main" {
			return nil
		}
		if idx.pkgs[pkg] == nil {
			idx.pkgs[pkg] = map[string]bool{}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					idx.pkgs[pkg][d.Name.Name] = true
					continue
				}
				if typ := recvName(d.Recv.List[0].Type); typ != "" {
					member(pkg, typ, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() {
								idx.pkgs[pkg][n.Name] = true
							}
						}
					case *ast.TypeSpec:
						if !sp.Name.IsExported() {
							continue
						}
						typ := sp.Name.Name
						idx.pkgs[pkg][typ] = true
						add(idx.members, pkg+"."+typ, "") // known, maybe without members
						add(idx.members, typ, "")
						var fields []*ast.Field
						switch tt := sp.Type.(type) {
						case *ast.StructType:
							fields = tt.Fields.List
						case *ast.InterfaceType:
							fields = tt.Methods.List
						}
						for _, fld := range fields {
							if len(fld.Names) == 0 { // embedded
								if n := recvName(fld.Type); n != "" {
									embeds[pkg+"."+typ] = append(embeds[pkg+"."+typ], n)
									member(pkg, typ, n)
								} else if sel, ok := fld.Type.(*ast.SelectorExpr); ok {
									member(pkg, typ, sel.Sel.Name)
									embeds[pkg+"."+typ] = append(embeds[pkg+"."+typ], "?") // from another package
								}
							}
							for _, n := range fld.Names {
								member(pkg, typ, n.Name)
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
	// Promote embedded members, a few levels deep; a type that embeds one
	// from another package may have any member.
	for range 3 {
		for k, es := range embeds {
			pkg, typ, _ := strings.Cut(k, ".")
			for _, e := range es {
				if e == "?" {
					member(pkg, typ, "*")
					continue
				}
				for m := range idx.members[pkg+"."+e] {
					member(pkg, typ, m)
				}
			}
		}
	}
	return idx
}

// recvName is the type name of a receiver or embedded field: T, *T, T[P].
func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// qualified matches pkg.Name(.Member)* and Type.Member, not preceded by a
// name character, a dot or a slash (a method call on a value, a URL, a file).
var qualified = regexp.MustCompile(`(^|[^\w./-])([A-Za-z]\w*)\.([A-Z]\w*)((?:\.[A-Z]\w*)*)`)

// check returns what is wrong with the Go identifiers in text.
func (idx *index) check(text string, external map[string]bool) []string {
	var msgs []string
	for _, m := range qualified.FindAllStringSubmatch(text, -1) {
		q, name, rest := m[2], m[3], m[4]
		if externalNames[q+"."+name] || spanNames[q+"."+name] {
			continue
		}
		var typ string // the type whose members follow
		switch names, isPkg := idx.pkgs[q]; {
		case isPkg:
			if !names[name] && !idx.members[q+".*"][name] { // a span name such as store.Write names Store.Write
				if external[q] {
					continue
				}
				msgs = append(msgs, "no exported name "+name+" in package "+q)
				continue
			}
			typ = q + "." + name
		case idx.members[q] != nil && q[0] >= 'A' && q[0] <= 'Z':
			typ, rest = q, "."+name+rest // Type.Member…
		default:
			continue // a value's method, another project's package, a file name
		}
		// The first member only: field and result types are not indexed.
		if sel, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), "."); sel != "" {
			if ms, ok := idx.members[typ]; ok && !ms["*"] && !ms[sel] {
				msgs = append(msgs, "no field or method "+sel+" of "+typ)
			}
		}
	}
	return msgs
}

var (
	shellComment = regexp.MustCompile(`(^|\s)(#|//)(\s.*)?$`)
	loneFlag     = regexp.MustCompile(`^--[a-z][a-z0-9-]*(=.*)?$`)
)

// cliWord matches a word that may be a command or an argument.
var cliWord = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// checkCommands returns what is wrong with each "agentmem …" command line
// in text (up to a pipe, a redirection, a comment or a separator), or with
// text that is a lone long flag ("--by"): it must be some command's flag.
func checkCommands(root *cobra.Command, text string) []string {
	text = shellComment.ReplaceAllString(text, "")
	fields := strings.Fields(text)
	if len(fields) > 0 && len(fields) <= 2 && loneFlag.MatchString(fields[0]) {
		name, _, _ := strings.Cut(fields[0][2:], "=")
		if !anyFlag(root, name) {
			return []string{"no agentmem command has the flag --" + name}
		}
		return nil
	}
	var msgs []string
	for i, f := range fields {
		if f != "agentmem" || i > 0 && strings.HasPrefix(fields[i-1], "-") {
			continue // not the command, or the value of another command's flag
		}
		cmd, positional, flagsDone, skip := root, false, false, false
		for _, tok := range fields[i+1:] {
			if skip { // the value of the flag before
				skip = false
				continue
			}
			tok = strings.Trim(tok, `"'`)
			if slices.Contains([]string{"|", "||", "&&", ";", ">", ">>", "<", "2>", "&"}, tok) || strings.HasPrefix(tok, "#") || strings.HasPrefix(tok, "$(") {
				break
			}
			switch {
			case tok == "--":
				flagsDone = true
			case !flagsDone && strings.HasPrefix(tok, "--"):
				name, _, hasValue := strings.Cut(tok[2:], "=")
				fl := lookupFlag(cmd, name)
				if name != "help" && fl == nil {
					msgs = append(msgs, cmd.CommandPath()+" has no flag --"+name)
				}
				skip = fl != nil && !hasValue && fl.NoOptDefVal == ""
			case !flagsDone && strings.HasPrefix(tok, "-") && len(tok) > 1:
				for _, r := range tok[1:] {
					fl := lookupShort(cmd, string(r))
					if r != 'h' && fl == nil {
						msgs = append(msgs, cmd.CommandPath()+" has no flag -"+string(r))
					}
					skip = fl != nil && fl.NoOptDefVal == ""
				}
			case !positional:
				if sub := child(cmd, tok); sub != nil {
					cmd = sub
					continue
				}
				if cmd == root && cliWord.MatchString(tok) {
					msgs = append(msgs, "agentmem has no command "+tok)
				}
				positional = true
			}
		}
	}
	return msgs
}

func child(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || slices.Contains(s.Aliases, name) {
			return s
		}
	}
	return nil
}

func lookupFlag(c *cobra.Command, name string) *pflag.Flag {
	for ; c != nil; c = c.Parent() {
		if f := c.Flags().Lookup(name); f != nil {
			return f
		}
		if f := c.PersistentFlags().Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

func lookupShort(c *cobra.Command, sh string) *pflag.Flag {
	for ; c != nil; c = c.Parent() {
		if f := c.Flags().ShorthandLookup(sh); f != nil {
			return f
		}
		if f := c.PersistentFlags().ShorthandLookup(sh); f != nil {
			return f
		}
	}
	return nil
}

// anyFlag reports whether some command in the tree below c has the flag.
func anyFlag(c *cobra.Command, name string) bool {
	if name == "help" || lookupFlag(c, name) != nil {
		return true
	}
	for _, s := range c.Commands() {
		if anyFlag(s, name) {
			return true
		}
	}
	return false
}
