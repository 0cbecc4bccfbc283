package console

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRenderMarkdownInert renders notes built to run something: raw
// HTML, script and event handlers, dangerous link schemes in every
// spelling Markdown allows, images. None survives as markup that acts;
// the links that are safe keep their destination.
func TestRenderMarkdownInert(t *testing.T) {
	cases := []string{
		"<script>alert(1)</script>",
		"<img src=x onerror=\"alert(2)\">",
		"text <b onmouseover=alert(3)>bold</b> <iframe src=javascript:alert(4)></iframe>",
		"[a](javascript:alert(5))",
		"[a](JavaScript:alert(6))",
		"[a](&#106;avascript:alert(7))",
		"[a](java&#x09;script:alert(8))",
		"[a](javascript&colon;alert(9))",
		"[a](<javascript:alert(10)>)",
		"[a](vbscript:msgbox(11))",
		"[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMik8L3NjcmlwdD4=)",
		"[a](file:///etc/passwd)",
		"[a][r]\n\n[r]: javascript:alert(13)",
		"<javascript:alert(14)>",
		"![x](javascript:alert(15))",
		"![x\" onerror=\"alert(16)](https://example.com/x.png)",
		"![x](https://example.com/x.png \"t\\\" onerror=\\\"alert(17)\")",
		"[![x](https://example.com/a.png)](https://example.com/)",
		"[a](//evil.example/x)",
		"[a](/\\evil.example/x)",
		"<a href=\"javascript:alert(18)\">a</a>",
		"```html\n<script>alert(19)</script>\n```",
		"| a | b |\n|---|---|\n| <script>alert(20)</script> | [x](javascript:alert(21)) |",
		"- [ ] <img src=x onerror=alert(22)>",
		"{onclick=alert(23)}\n# Heading {#x onclick=alert(24)}",
	}
	for _, c := range cases {
		got, _, err := renderMarkdown(c)
		if err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if bad := activeMarkup(string(got)); bad != "" {
			t.Errorf("%q rendered %q: %s", c, got, bad)
		}
	}
	if _, dropped, _ := renderMarkdown("a <b>b</b>"); !dropped {
		t.Error("raw HTML dropped without a word")
	}
}

// Rendered Markdown's markup: text holds no "<" (it is escaped), and an
// attribute's value no '"'.
var (
	tagRE  = regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>`)
	attrRE = regexp.MustCompile(`\s([a-zA-Z-]+)(?:="([^"]*)")?`)
)

// activeMarkup says what in rendered HTML could act: an element other
// than Markdown's, an attribute other than the few it sets, or a link
// whose destination is not safe ("" for none).
func activeMarkup(h string) string {
	elements := strings.Fields("p h1 h2 h3 h4 h5 h6 ul ol li a table thead tbody tr th td pre code em strong del blockquote hr br input")
	attrs := map[string][]string{"a": {"href", "title", "rel", "class"}, "input": {"checked", "disabled", "type"},
		"th": {"style"}, "td": {"style"}, "code": {"class"}}
	for _, m := range tagRE.FindAllStringSubmatch(h, -1) {
		name := strings.ToLower(m[2])
		if !slices.Contains(elements, name) {
			return "element " + m[0]
		}
		for _, a := range attrRE.FindAllStringSubmatch(m[3], -1) {
			if !slices.Contains(attrs[name], strings.ToLower(a[1])) {
				return "attribute " + a[0] + " of " + m[0]
			}
			switch v := html.UnescapeString(a[2]); strings.ToLower(a[1]) {
			case "href":
				if !safeURL([]byte(v)) {
					return "link " + m[0]
				}
			case "style":
				if !regexp.MustCompile(`^text-align:(left|right|center)$`).MatchString(v) {
					return "style " + m[0]
				}
			case "type":
				if v != "checkbox" {
					return "input " + m[0]
				}
			}
		}
	}
	return ""
}

// TestRenderMarkdownKeeps renders what a note is for: headings, lists,
// tables, code, and the links that are safe.
func TestRenderMarkdownKeeps(t *testing.T) {
	src := "# Title\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nx := 1 < 2\n```\n\n" +
		"[site](https://example.com/p?q=1) [mail](mailto:kim@example.com) [sibling](other.md) [top](#top) https://example.org/bare\n\n" +
		"![chart](charts/a.png)\n"
	got, dropped, err := renderMarkdown(src)
	if err != nil || dropped {
		t.Fatalf("dropped %v, %v", dropped, err)
	}
	for _, want := range []string{"<h1>Title</h1>", "<li>one</li>", "<table>", "<td>1</td>", "x := 1 &lt; 2",
		`<a href="https://example.com/p?q=1" rel="nofollow noopener noreferrer">site</a>`,
		`<a href="mailto:kim@example.com" rel="nofollow noopener noreferrer">mail</a>`,
		`<a href="other.md" rel="nofollow noopener noreferrer">sibling</a>`, `<a href="#top"`,
		`<a href="https://example.org/bare" rel="nofollow noopener noreferrer">https://example.org/bare</a>`,
		`<a href="charts/a.png" rel="nofollow noopener noreferrer" class="image">chart</a>`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rendered %s\nwant it to hold %s", got, want)
		}
	}
}
