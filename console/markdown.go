// A note rendered as Markdown for the file page: nothing it holds can run.

package console

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown is CommonMark with GitHub's tables, strikethrough, task lists
// and bare links. Its renderer is goldmark's default, which never passes
// raw HTML through ("<!-- raw HTML omitted -->"); no attribute syntax and
// no heading ids are enabled, so a note sets no attribute of its own.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// linkRel is the rel of every link a note makes.
const linkRel = "nofollow noopener noreferrer"

// renderMarkdown renders a note as HTML that nothing in it can make
// active: raw HTML is dropped, a link keeps its destination only when it
// is http(s), mailto or relative (any other, javascript: or data: among
// them, becomes its text), and an image becomes a link to its source
// labelled with its text, so that a note loads nothing by itself.
// dropped reports that the note holds raw HTML, which is not shown.
func renderMarkdown(src string) (_ template.HTML, dropped bool, _ error) {
	b := []byte(src)
	doc := markdown.Parser().Parse(text.NewReader(b))
	dropped = inertLinks(doc, b)
	var out bytes.Buffer
	if err := markdown.Renderer().Render(&out, b, doc); err != nil {
		return "", false, err
	}
	return template.HTML(out.String()), dropped, nil // raw HTML off, every destination checked above
}

// inertLinks rewrites doc's links, bare links and images as
// renderMarkdown says, and reports whether doc holds raw HTML.
func inertLinks(doc ast.Node, src []byte) (rawHTML bool) {
	var nodes []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.(type) {
		case *ast.Link, *ast.AutoLink, *ast.Image:
			if entering {
				nodes = append(nodes, n)
			}
		case *ast.RawHTML, *ast.HTMLBlock:
			rawHTML = true
		}
		return ast.WalkContinue, nil
	})
	for _, n := range nodes {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch n := n.(type) {
		case *ast.Link:
			if safeURL(util.URLEscape(n.Destination, true)) {
				n.SetAttributeString("rel", []byte(linkRel))
			} else {
				unwrap(n)
			}
		case *ast.AutoLink:
			u := n.URL(src)
			if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(u), []byte("mailto:")) {
				u = append([]byte("mailto:"), u...)
			}
			if safeURL(util.URLEscape(u, false)) {
				n.SetAttributeString("rel", []byte(linkRel))
			} else {
				parent.ReplaceChild(parent, n, ast.NewString(n.Label(src)))
			}
		case *ast.Image:
			if !safeURL(util.URLEscape(n.Destination, true)) || insideLink(n) {
				unwrap(n) // a link in a link is no HTML: keep the text
				continue
			}
			l := ast.NewLink()
			l.Destination, l.Title = n.Destination, n.Title
			l.SetAttributeString("rel", []byte(linkRel))
			l.SetAttributeString("class", []byte("image"))
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				l.AppendChild(l, c)
				c = next
			}
			if !l.HasChildren() {
				l.AppendChild(l, ast.NewString([]byte("image")))
			}
			parent.ReplaceChild(parent, n, l)
		}
	}
	return rawHTML
}

// unwrap replaces n by its children.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

// insideLink reports whether n lies in a link.
func insideLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.Link); ok {
			return true
		}
	}
	return false
}

// safeURL reports whether a link may keep href, its destination as the
// renderer writes it (entities resolved, so "&#106;avascript:" is
// javascript: here, and what is not a URL character percent-encoded): an
// absolute http or https URL with a host, a mailto: address, or a
// relative reference (a path, a query or a fragment; not "//host", not a
// backslash, which browsers read as a slash). What fails to parse is
// refused.
func safeURL(href []byte) bool {
	s := string(href)
	if strings.ContainsAny(s, "\\ ") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	case "":
		return u.Host == "" && !strings.HasPrefix(s, "//")
	}
	return false
}
