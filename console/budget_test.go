package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// memoryLines is a MEMORY.md of n bullet lines of about width characters.
func memoryLines(n, width int) string {
	var b strings.Builder
	for i := range n {
		l := fmt.Sprintf("- fact %d: déjà vu ", i)
		b.WriteString(l + strings.Repeat("x", max(0, width-utf8.RuneCountInString(l))) + "\n")
	}
	return b.String()
}

// TestSnapshotBudget: the snapshot's budget adds up to the block and the
// instructions it answers beside, counts the lines the block shows, and
// says when MEMORY.md no longer fits; a file answers its size in tokens.
func TestSnapshotBudget(t *testing.T) {
	e := newEnv(t)
	e.seed("alice/main/MEMORY.md", memoryLines(260, 50))
	e.seed("alice/main/topic.md", "déjà vu\n")
	e.seed("alice/main/deep/er.md", "not listed")
	var snap SnapshotJSON
	if err := json.Unmarshal(e.do(req{method: "GET", target: "/api/v1/namespaces/alice/snapshot", key: "alice-key"}).want(200, "").Body.Bytes(), &snap); err != nil {
		t.Fatal(err)
	}
	b, runes := snap.Budget, utf8.RuneCountInString
	shown := len(regexp.MustCompile(`(?m)^- fact \d+:`).FindAllString(snap.Snapshot, -1))
	tokens := func(chars int) int { return (chars + 3) / 4 }
	switch {
	case b == nil:
		t.Fatal("no budget")
	case b.Total.Chars != runes(snap.Instructions)+runes(snap.Snapshot) || b.Guidance.Chars != runes(snap.Instructions) ||
		b.Guidance.Chars+b.Main.Chars+b.Files.Chars+b.Other.Chars != b.Total.Chars:
		t.Fatalf("the parts do not add up to the instructions and the block: %+v", b)
	case b.Total.Tokens != tokens(b.Total.Chars) || b.Main.Tokens != tokens(b.Main.Chars) || b.Total.Tokens > b.MaxTokens || b.MaxTokens != 2000:
		t.Fatalf("tokens are not chars/4 rounded up within 2,000: %+v", b)
	case b.MainLines != 260 || b.CutByMaxLines != 60 || b.MainShown != shown || b.CutByBudget != 200-shown || b.MainFits || b.CharsPerToken != 4:
		t.Fatalf("the block shows %d of 260 lines; budget %+v", shown, b)
	case b.FilesListed+b.FilesOmitted != 1 || strings.Contains(snap.Snapshot, "er.md"):
		t.Fatalf("one file to list, none nested: %+v\n%s", b, snap.Snapshot)
	}
	f := e.do(req{method: "GET", target: aliceFile("main/topic.md"), key: "alice-key"}).want(200, "").json()
	if f["chars"] != 8.0 || f["tokens"] != 2.0 {
		t.Fatalf("topic.md (8 characters): %v", f)
	}
	e.seed("bob_40example.com/main/MEMORY.md", "- short\n")
	var small SnapshotJSON
	json.Unmarshal(e.do(req{method: "GET", target: "/api/v1/namespaces/bob_40example.com/snapshot", key: "bob-key"}).want(200, "").Body.Bytes(), &small)
	if b := small.Budget; !b.MainFits || b.MainShown != 1 || b.CutByBudget != 0 || b.Main.Chars != runes("### MEMORY.md\n\n- short") {
		t.Fatalf("a short notebook fits: %+v", b)
	}
}

// TestNotebookPageBudget: the notebook page shows the figures of the
// snapshot's budget, each file's tokens, and the warning only when
// MEMORY.md no longer fits.
func TestNotebookPageBudget(t *testing.T) {
	e := newEnv(t)
	e.seed("alice/main/MEMORY.md", memoryLines(260, 50))
	e.seed("alice/main/topic.md", strings.Repeat("é", 41))
	sid := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: sid})
	var snap SnapshotJSON
	json.Unmarshal(e.do(req{method: "GET", target: "/api/v1/namespaces/alice/snapshot", key: "alice-key"}).want(200, "").Body.Bytes(), &snap)
	html := w.Body.String()
	for _, want := range []string{
		fmt.Sprintf(`<tr data-part="main"><td>MEMORY.md excerpt</td><td class="num tokens">%d</td><td class="num chars">%d</td>`, snap.Budget.Main.Tokens, snap.Budget.Main.Chars),
		fmt.Sprintf(`<b data-figure="cut-by-budget">%d</b>`, snap.Budget.CutByBudget),
		fmt.Sprintf(`<b data-figure="total-tokens">%d</b> of <b data-figure="max-tokens">2000</b>`, snap.Budget.Total.Tokens),
		`id="budget-warning"`, `<td class="num">11</td>`, // topic.md: 41 characters
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the notebook page lacks %s", want)
		}
	}
	e.seed("bob_40example.com/main/MEMORY.md", "- short\n")
	if w := e.page(pageReq{method: "GET", target: "/ns/bob_40example.com/", cookie: e.signIn("bob-key")}); w.Code != 200 || strings.Contains(w.Body.String(), `id="budget-warning"`) {
		t.Errorf("a notebook that fits warns: %d", w.Code)
	}
}

// TestFolderPages: a folder lists its subfolders (with their files, at
// every depth) and files, pages through them without repeating or
// skipping one, and the file page's breadcrumbs link each folder.
func TestFolderPages(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"main/MEMORY.md", "main/a/b/c/deep.md", "main/a/b/other.md", "main/a-x.md", "main/a/top.md", "main/z.md"} {
		e.seed("alice/"+p, "x")
	}
	sid := e.signIn("alice-key")
	get := func(target string) string {
		w := e.page(pageReq{method: "GET", target: target, cookie: sid})
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		return w.Body.String()
	}
	root := get("/ns/alice/tree/")
	if !strings.Contains(root, `href="/ns/alice/tree/main">main/</a>`) || !strings.Contains(root, "6 files") {
		t.Fatalf("the namespace's root lists main/ with its 6 files:\n%s", root)
	}
	main := get("/ns/alice/tree/main")
	rows := regexp.MustCompile(`<td><a href="([^"]+)">`).FindAllStringSubmatch(main, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1])
	}
	// Code-point order: "MEMORY.md" < "a-x.md" < "a/…" < "z.md".
	if want := "/ns/alice/files/main/MEMORY.md /ns/alice/files/main/a-x.md /ns/alice/tree/main/a /ns/alice/files/main/z.md"; strings.Join(got, " ") != want {
		t.Fatalf("main/ lists %v, want %s", got, want)
	}
	if !strings.Contains(main, "3 files") {
		t.Fatalf("main/a holds 3 files:\n%s", main)
	}
	file := get("/ns/alice/files/main/a/b/c/deep.md")
	for _, c := range []string{`<a href="/ns/alice/tree/">alice</a>`, `<a href="/ns/alice/tree/main">main</a>`, `<a href="/ns/alice/tree/main/a/b">b</a>`,
		`<a href="/ns/alice/tree/main/a/b/c">c</a>`, `<span aria-current="page">deep.md</span>`, `data-shortcut="e"`} {
		if !strings.Contains(file, c) {
			t.Errorf("the file page lacks %s", c)
		}
	}
	if w := e.page(pageReq{method: "GET", target: "/ns/alice/tree/main/nothing", cookie: sid}); w.Code != http.StatusNotFound {
		t.Errorf("an empty folder: %d, want 404", w.Code)
	}
	if w := e.page(pageReq{method: "GET", target: "/ns/alice/tree/main?after=" + "bob/x.md", cookie: sid}); w.Code != http.StatusBadRequest {
		t.Errorf("an after outside the folder: %d, want 400", w.Code)
	}
}

// TestFolderPaging: a folder of more entries than a page pages through
// them all, each once, also when a page ends on a subfolder.
func TestFolderPaging(t *testing.T) {
	e := newEnv(t)
	var want []string
	for i := range pageEntries + 30 {
		if i%3 == 0 { // entry 99, the last of the first page, is a folder
			e.seed(fmt.Sprintf("alice/main/f%03d/a.md", i), "x")
			e.seed(fmt.Sprintf("alice/main/f%03d/b/c.md", i), "x")
			want = append(want, fmt.Sprintf("/ns/alice/tree/main/f%03d", i))
			continue
		}
		e.seed(fmt.Sprintf("alice/main/f%03d.md", i), "x")
		want = append(want, fmt.Sprintf("/ns/alice/files/main/f%03d.md", i))
	}
	sid := e.signIn("alice-key")
	var got []string
	pages := 0
	for target := "/ns/alice/tree/main"; target != ""; pages++ {
		w := e.page(pageReq{method: "GET", target: target, cookie: sid})
		if w.Code != http.StatusOK || pages > 3 {
			t.Fatalf("GET %s: %d", target, w.Code)
		}
		for _, r := range regexp.MustCompile(`<td><a href="([^"]+)">`).FindAllStringSubmatch(w.Body.String(), -1) {
			got = append(got, r[1])
		}
		target = ""
		if m := regexp.MustCompile(`<a class="button" href="([^"]+)">Next page`).FindStringSubmatch(w.Body.String()); m != nil {
			target = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if pages != 2 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%d pages listed %d entries, want 2 pages of %d:\n%v", pages, len(got), len(want), got)
	}
}
