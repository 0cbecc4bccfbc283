package console

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/core/textdiff"
)

var (
	formRe     = regexp.MustCompile(`(?s)<form [^>]*>.*?</form>`)
	inputRe    = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	textareaRe = regexp.MustCompile(`(?s)<textarea [^>]*name="([^"]+)"[^>]*>\n(.*?)</textarea>`)
)

// formWith is what the form of body that holds want would post: its
// hidden inputs and its textarea, unescaped; nil when no form holds want.
func formWith(body, want string) url.Values {
	for _, f := range formRe.FindAllString(body, -1) {
		if !strings.Contains(f, want) {
			continue
		}
		v := url.Values{}
		for _, m := range inputRe.FindAllStringSubmatch(f, -1) {
			v.Set(m[1], html.UnescapeString(m[2]))
		}
		for _, m := range textareaRe.FindAllStringSubmatch(f, -1) {
			v.Set(m[1], html.UnescapeString(m[2]))
		}
		return v
	}
	return nil
}

// mergeEnv is a signed-in editor of alice's main/notes.md: the form
// rendered from its first version, then theirs written over it.
type mergeEnv struct {
	*env
	sid  string
	form url.Values // the editor's form, as rendered from the first version
}

func newMergeEnv(t *testing.T, history bool, base, theirs string) *mergeEnv {
	t.Helper()
	opts := &store.Options{}
	if history {
		opts.History = &store.HistoryOptions{}
	}
	s := store.New(newMemDriver(t), opts)
	t.Cleanup(func() { s.Close() })
	e := &mergeEnv{env: newEnvOn(t, s, nil)}
	e.seed("alice/main/notes.md", base)
	e.sid = e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/edit/main/notes.md", cookie: e.sid})
	wantStatus(t, w, http.StatusOK)
	if e.form = formWith(w.Body.String(), `id="content"`); e.form == nil {
		t.Fatalf("no editor form in %s", w.Body)
	}
	e.write(theirs)
	return e
}

// write writes content over the current version, as an agent would.
func (e *mergeEnv) write(content string) string {
	e.t.Helper()
	f, err := e.s.Read(e.t.Context(), "alice/main/notes.md", 1<<20)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := e.s.Write(e.t.Context(), store.WriteRequest{Path: "alice/main/notes.md", Content: content, Expected: f.Version,
		Metadata: map[string]string{UpdatedByKey: "agent"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Version
}

// save posts form to the save route.
func (e *mergeEnv) save(form url.Values, status int) string {
	e.t.Helper()
	w := e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: e.sid, form: form})
	wantStatus(e.t, w, status)
	return w.Body.String()
}

// submit is the editor's form with the text yours.
func (e *mergeEnv) submit(yours string) url.Values {
	f := url.Values{}
	for k, v := range e.form {
		f[k] = v
	}
	f.Set("content", yours)
	return f
}

const mergeBase = "# Notes\n\n- lives in Hanoi\n- likes tea\n- works on agentmem\n"

func TestPagesConflictMergesEditsApart(t *testing.T) {
	e := newMergeEnv(t, true, mergeBase, "# Notes\n\n- lives in Da Nang\n- likes tea\n- works on agentmem\n")
	theirs, _ := e.s.Read(t.Context(), "alice/main/notes.md", 1<<20)
	b := e.save(e.submit("# Notes\n\n- lives in Hanoi\n- likes tea\n- works on agentmem and its console\n"), http.StatusConflict)
	merge := formWith(b, `id="merged"`)
	if merge == nil {
		t.Fatalf("the conflict view offers no merge:\n%s", b)
	}
	want := "# Notes\n\n- lives in Da Nang\n- likes tea\n- works on agentmem and its console\n"
	if merge.Get("content") != want || merge.Get("version") != theirs.Version || merge.Get("merge") != "1" {
		t.Fatalf("the merge form posts %v; want content %q over theirs' version %s, merge=1", merge, want, theirs.Version)
	}
	if yours := formWith(b, `id="content"`); yours == nil || yours.Get("token") == merge.Get("token") {
		t.Fatalf("the form with yours must stay, with a token of its own: %v", yours)
	}
	for _, want := range []string{"do not overlap", "Save the merge", "Save mine over theirs"} {
		if !strings.Contains(b, want) {
			t.Errorf("the conflict view lacks %q", want)
		}
	}
	if strings.Contains(b, `class="overlap"`) {
		t.Error("a clean merge shows an overlap")
	}
	e.save(merge, http.StatusSeeOther)
	if got := e.content("alice/main/notes.md"); got != want {
		t.Fatalf("after saving the merge: %q, want %q", got, want)
	}
	// The same form once more (a double submit) writes nothing again.
	e.save(merge, http.StatusSeeOther)
	if n := len(e.history(store.HistoryRequest{Path: "alice/main/notes.md"}).Entries); n != 3 {
		t.Fatalf("%d history entries, want 3 (seed, theirs, the merge)", n)
	}
}

func TestPagesConflictMergeMeetsAThirdWriter(t *testing.T) {
	e := newMergeEnv(t, true, mergeBase, "# Notes\n\n- lives in Da Nang\n- likes tea\n- works on agentmem\n")
	b := e.save(e.submit(mergeBase+"- plays go\n"), http.StatusConflict)
	merge := formWith(b, `id="merged"`)
	// A third writer saves before the merge is: the merge's save is
	// itself a compare-and-swap on the version it merged.
	third := e.write("# Notes\n\n- lives in Da Nang\n- likes green tea\n- works on agentmem\n")
	b = e.save(merge, http.StatusConflict)
	if got := e.content("alice/main/notes.md"); !strings.Contains(got, "green tea") || strings.Contains(got, "plays go") {
		t.Fatalf("the third writer's text was overwritten: %q", got)
	}
	// The new view merges again, from the version the merge started from.
	again := formWith(b, `id="merged"`)
	if want := "# Notes\n\n- lives in Da Nang\n- likes green tea\n- works on agentmem\n- plays go\n"; again == nil || again.Get("content") != want || again.Get("version") != third {
		t.Fatalf("the second merge form: %v, want %q over %s", again, want, third)
	}
	e.save(again, http.StatusSeeOther)
}

func TestPagesConflictMarksOverlaps(t *testing.T) {
	e := newMergeEnv(t, true, mergeBase, "# Notes\n\n- lives in Da Nang\n- likes tea\n- works on agentmem\n")
	b := e.save(e.submit("# Notes\n\n- lives in Saigon\n- likes tea\n- works on agentmem\n- plays go\n"), http.StatusConflict)
	merge := formWith(b, `id="merged"`)
	want := "# Notes\n\n" + textdiff.MarkerYours + "\n- lives in Saigon\n" + textdiff.MarkerSplit + "\n- lives in Da Nang\n" + textdiff.MarkerTheirs +
		"\n- likes tea\n- works on agentmem\n- plays go\n"
	if merge == nil || merge.Get("content") != want {
		t.Fatalf("the merge form: %v, want the overlap marked and the edit apart kept: %q", merge, want)
	}
	for _, want := range []string{`1 place where you both changed the same lines is marked`, `<section class="overlap" id="overlap-1">`, "at line 3 of the merged text",
		`<pre class="content overlap-yours">- lives in Saigon` + "\n</pre>", `<pre class="content overlap-theirs">- lives in Da Nang` + "\n</pre>",
		`<pre class="content overlap-base">- lives in Hanoi` + "\n</pre>"} {
		if !strings.Contains(b, want) {
			t.Fatalf("the conflict view lacks %q:\n%s", want, b)
		}
	}
	// Saved with its markers left in, the merge is refused, nothing
	// written, the text kept in the editor.
	before := e.content("alice/main/notes.md")
	b = e.save(merge, http.StatusUnprocessableEntity)
	if !strings.Contains(b, "1 place is still marked") || formWith(b, `id="content"`).Get("content") != want || e.content("alice/main/notes.md") != before {
		t.Fatalf("a merge saved with its markers: stored %q, page\n%s", e.content("alice/main/notes.md"), b)
	}
	// Resolved by hand, it saves.
	resolved := "# Notes\n\n- lives in Da Nang (was Saigon)\n- likes tea\n- works on agentmem\n- plays go\n"
	merge.Set("content", resolved)
	e.save(merge, http.StatusSeeOther)
	if got := e.content("alice/main/notes.md"); got != resolved {
		t.Fatalf("after saving the resolved merge: %q", got)
	}
	// The plain editor saves markers as any text (they are not the
	// merge's): only the merge form checks.
	f, _ := e.s.Read(t.Context(), "alice/main/notes.md", 1<<20)
	plain := url.Values{"path": {"main/notes.md"}, "version": {f.Version}, "token": {"plain"}, "content": {want}}
	e.save(plain, http.StatusSeeOther)
}

func TestPagesConflictWithoutHistoryKeepsTheView(t *testing.T) {
	e := newMergeEnv(t, false, mergeBase, "# Notes\n\n- lives in Da Nang\n- likes tea\n- works on agentmem\n")
	mine := mergeBase + "- plays go\n"
	b := e.save(e.submit(mine), http.StatusConflict)
	if formWith(b, `id="merged"`) != nil {
		t.Fatal("a merge offered without the version the edit started from")
	}
	if !strings.Contains(b, "not in the store&#39;s history") || !strings.Contains(b, "history=on") {
		t.Fatalf("the view does not say why there is no merge:\n%s", b)
	}
	if yours := formWith(b, `id="content"`); yours == nil || yours.Get("content") != mine || !strings.Contains(b, "- lives in Da Nang") {
		t.Fatalf("the view without a merge lost yours or theirs:\n%s", b)
	}
}

func TestPagesConflictOnCreateOffersNoMerge(t *testing.T) {
	e := newEnv(t)
	sid := e.signIn("alice-key")
	e.seed("alice/main/new.md", "theirs\n")
	w := e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: sid,
		form: url.Values{"new": {"1"}, "path": {"main/new.md"}, "version": {""}, "token": {"n1"}, "content": {"mine\n"}}})
	wantStatus(t, w, http.StatusConflict)
	if b := w.Body.String(); formWith(b, `id="merged"`) != nil || strings.Contains(b, `class="muted nomerge"`) || formWith(b, `id="content"`).Get("content") != "mine\n" {
		t.Fatalf("a create that met a file: want today's view, no merge and no word of one:\n%s", b)
	}
}

func TestPagesConflictShowsADeleteAgainstAnEdit(t *testing.T) {
	e := newMergeEnv(t, true, mergeBase, "# Notes\n\n- lives in Da Nang\n- likes tea\n- works on agentmem\n")
	b := e.save(e.submit("# Notes\n\n- likes tea\n- works on agentmem\n"), http.StatusConflict)
	for _, want := range []string{`<p class="muted overlap-yours">(you deleted these lines)</p>`, `<pre class="content overlap-theirs">- lives in Da Nang` + "\n</pre>"} {
		if !strings.Contains(b, want) {
			t.Fatalf("the conflict view lacks %q:\n%s", want, b)
		}
	}
	want := "# Notes\n\n" + textdiff.MarkerYours + "\n" + textdiff.MarkerSplit + "\n- lives in Da Nang\n" + textdiff.MarkerTheirs + "\n- likes tea\n- works on agentmem\n"
	if got := formWith(b, `id="merged"`).Get("content"); got != want {
		t.Fatalf("the merge form holds %q, want %q", got, want)
	}
}
