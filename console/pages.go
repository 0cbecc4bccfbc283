package console

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/store"
)

// The pages' templates and static files, embedded: serving the console
// needs no files on disk and no Node build.
//
//go:embed templates static
var assets embed.FS

// pageNames are the templates in templates/, each rendered inside
// layout.html.
var pageNames = []string{"signin", "error", "namespaces", "notebook", "file", "edit", "conflict",
	"history", "version", "diff", "search", "forget", "forgotten", "imported", "consolidated", "delete"}

// contentSecurityPolicy is sent with every page: only the console's own
// script and style, no inline script, no framing, forms post only here.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Page bounds.
const (
	pageFiles   = 100 // files listed on a notebook page
	pageHistory = 200 // changes listed on a history page
)

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"link":  link,
		"when":  when,
		"score": func(f float64) string { return fmt.Sprintf("%.3f", f) },
		"lines": diffLines,
		"short": shortVersion,
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// link joins base with parts into a URL path, escaping each segment.
func link(base string, parts ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, p := range parts {
		for seg := range strings.SplitSeq(strings.Trim(p, "/"), "/") {
			if seg != "" {
				b.WriteString("/" + url.PathEscape(seg))
			}
		}
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

func when(t any) string {
	switch t := t.(type) {
	case time.Time:
		if !t.IsZero() {
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	case *time.Time:
		if t != nil {
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	}
	return "—"
}

// shortVersion is a version cut to its ends for tables; pages show the
// whole one in the title attribute.
func shortVersion(v string) string {
	if utf8.RuneCountInString(v) <= 16 {
		return v
	}
	r := []rune(v)
	return string(r[:8]) + "…" + string(r[len(r)-6:])
}

// diffLine is one line of a unified diff with its kind (add, del, hunk,
// head, ctx), for styling.
type diffLine struct{ Kind, Text string }

func diffLines(d string) []diffLine {
	var out []diffLine
	for l := range strings.SplitSeq(strings.TrimSuffix(d, "\n"), "\n") {
		k := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			k = "head"
		case strings.HasPrefix(l, "@@"):
			k = "hunk"
		case strings.HasPrefix(l, "+"):
			k = "add"
		case strings.HasPrefix(l, "-"):
			k = "del"
		}
		out = append(out, diffLine{k, l})
	}
	return out
}

// registerPages adds the pages to h's mux beside the API.
func (h *Handler) registerPages() error {
	pages, err := parsePages()
	if err != nil {
		return err
	}
	h.pages = pages
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return err
	}
	h.cop = http.NewCrossOriginProtection()
	h.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusForbidden, "error", &pageData{Base: pageBase(r), Title: "Refused",
			Data: errorData{Status: http.StatusForbidden, Detail: "a cross-origin request may not change anything: use the console's own pages"}})
	}))
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	serveStatic := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
	h.mux.Handle("GET /static/", serveStatic)
	// The icon is also where browsers look for it without a <link>.
	h.mux.Handle("GET /favicon.ico", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := new(http.Request)
		*r2 = *r
		r2.URL = &url.URL{Path: "/static/favicon.ico"}
		serveStatic.ServeHTTP(w, r2)
	}))
	h.mux.Handle("GET /signin", h.public(h.signinPage))
	h.mux.Handle("POST /signin", h.public(h.signin))
	h.mux.Handle("POST /signout", h.public(h.signout))
	h.mux.Handle("GET /{$}", h.page("home", false, (*Handler).homePage))
	h.mux.Handle("/", h.public(func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "error", &pageData{Base: pageBase(r), Title: "Not found",
			Data: errorData{Status: http.StatusNotFound, Detail: "no page answers this address"}})
	}))
	ns := "/ns/{ns}"
	for pattern, fn := range map[string]func(*Handler, *pageCall) error{
		"GET " + ns + "/{$}":                (*Handler).notebookPage,
		"GET " + ns + "/files/{path...}":    (*Handler).filePage,
		"GET " + ns + "/edit/{path...}":     (*Handler).editPage,
		"GET " + ns + "/new":                (*Handler).newPage,
		"POST " + ns + "/save":              (*Handler).save,
		"GET " + ns + "/delete/{path...}":   (*Handler).deletePage,
		"POST " + ns + "/delete":            (*Handler).deleteForm,
		"GET " + ns + "/history/{$}":        (*Handler).historyPage,
		"GET " + ns + "/history/{path...}":  (*Handler).historyPage,
		"GET " + ns + "/versions/{path...}": (*Handler).versionPage,
		"GET " + ns + "/diff/{path...}":     (*Handler).diffPage,
		"POST " + ns + "/restore":           (*Handler).restoreForm,
		"GET " + ns + "/search":             (*Handler).searchPage,
		"GET " + ns + "/export":             (*Handler).exportPage,
		"POST " + ns + "/import":            (*Handler).importForm,
		"POST " + ns + "/consolidate":       (*Handler).consolidateForm,
		"GET " + ns + "/forget":             (*Handler).forgetPage,
		"POST " + ns + "/forget":            (*Handler).forgetForm,
	} {
		h.mux.Handle(pattern, h.page(pattern, true, fn))
	}
	return nil
}

// securityHeaders are sent with every page and static file.
func securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
}

// pageBase is the path the console is mounted under ("" at the root): the
// part of the request's path that http.StripPrefix removed.
func pageBase(r *http.Request) string {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		return ""
	}
	base, ok := strings.CutSuffix(u.EscapedPath(), r.URL.EscapedPath())
	if !ok || base != "" && (!strings.HasPrefix(base, "/") || strings.HasPrefix(base, "//")) {
		return ""
	}
	return strings.TrimSuffix(base, "/")
}

// pageData is what every template gets.
type pageData struct {
	Base  string
	Title string
	// P is the signed-in principal, nil on the sign-in page.
	P *Principal
	// NS is the namespace the page is about, "" for none.
	NS string
	// Home is the URL of the principal's start page.
	Home string
	// Agent is the notebook's folder ("main").
	Agent string
	// Flash is the session's one-shot notice for this page (saved,
	// deleted), nil for none: set by the request that redirected here,
	// never read from the URL.
	Flash *flash
	Data  any
}

type errorData struct {
	Status int
	Detail string
}

// pageCall is one page request of a signed-in principal.
type pageCall struct {
	*call
	base string
	sid  string
	t    *sessions
}

// data is what a template of pc gets, with the session's notice for this
// page (taken: it shows once).
func (pc *pageCall) data(title string, d any) *pageData {
	p := pc.p
	home := link(pc.base, "ns", p.Namespace()) + "/"
	if p.Admin {
		home = link(pc.base) // the namespaces
	}
	return &pageData{Base: pc.base, Title: title, P: &p, NS: pc.ns, Home: home, Data: d,
		Flash: pc.t.takeFlash(pc.sid, pc.r.URL.Path)}
}

// redirectNS answers 303 to the page of pc's namespace at parts (its
// notebook without any), leaving text (and link, when not nil) as the
// session's notice for that page.
func (pc *pageCall) redirectNS(text string, fl *flashLink, parts ...string) {
	to, where := pc.nsURL(parts...), "/ns/"+pc.ns+"/"+strings.Join(parts, "/")
	if len(parts) == 0 {
		to += "/"
	}
	pc.t.setFlash(pc.sid, &flash{path: where, Text: text, Link: fl})
	http.Redirect(pc.w, pc.r, to, http.StatusSeeOther)
}

// nsURL is the URL of a page of pc's namespace.
func (pc *pageCall) nsURL(parts ...string) string {
	return link(pc.base, append([]string{"ns", pc.ns}, parts...)...)
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, d *pageData) {
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if d.Agent == "" {
		d.Agent = h.agent
	}
	var b strings.Builder
	if err := h.pages[name].ExecuteTemplate(&b, "layout", d); err != nil {
		h.log.ErrorContext(r.Context(), "agentmem/console: page failed to render", "page", name, "error", err)
		http.Error(w, "the page failed to render; the error is in the server's log", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	w.Write([]byte(b.String()))
}

// public serves a page that needs no session, behind cross-origin
// protection.
func (h *Handler) public(fn http.HandlerFunc) http.Handler {
	return h.cop.Handler(fn)
}

// page serves a page of a signed-in principal, behind cross-origin
// protection: without a live session it redirects to the sign-in page;
// the session's key is resolved through Options.Authenticate again first,
// so a key that is no longer known ends the session (to sign-in, nothing
// done) and a changed role applies at once; with {ns}, the principal must
// reach the namespace (as in the API).
func (h *Handler) page(name string, namespaced bool, fn func(*Handler, *pageCall) error) http.Handler {
	rt := &route{op: "page " + name}
	return h.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := pageBase(r)
		toSignin := func(reason string) {
			h.setSessionCookie(w, r, base, "", time.Time{}) // unknown, expired or revoked: forget it
			securityHeaders(w)
			http.Redirect(w, r, link(base, "signin")+"?"+reason, http.StatusSeeOther)
		}
		ck, err := r.Cookie(sessionCookie)
		if err != nil {
			securityHeaders(w)
			http.Redirect(w, r, link(base, "signin")+"?expired=0", http.StatusSeeOther)
			return
		}
		s, ok := h.sessions.lookup(ck.Value)
		if !ok {
			toSignin("expired=1")
			return
		}
		pc := &pageCall{call: &call{w: &recorder{ResponseWriter: w}, r: r, p: s.p, rt: rt}, base: base, sid: ck.Value, t: h.sessions}
		p, err := h.resolveKey(r, s.key)
		switch {
		case errors.Is(err, ErrUnauthenticated):
			h.sessions.end(ck.Value)
			toSignin("revoked=1")
			return
		case err != nil:
			h.pageFail(pc, err)
			return
		}
		if p != s.p {
			h.sessions.update(ck.Value, p)
		}
		pc.p = p
		if namespaced {
			if err := pc.admitNamespace(r.PathValue("ns")); err != nil {
				h.pageFail(pc, err)
				return
			}
		}
		if err := fn(h, pc); err != nil {
			h.pageFail(pc, err)
		}
	}))
}

// resolveKey resolves key through Options.Authenticate as if it came as a
// bearer token with r: the principal of a sign-in and of every page
// request of its session, with the console as its client. An unknown key
// (or one that resolves to no principal) is [ErrUnauthenticated]; any
// other error is the server's.
func (h *Handler) resolveKey(r *http.Request, key string) (Principal, error) {
	ar := r.Clone(r.Context())
	ar.Header = http.Header{"Authorization": {"Bearer " + key}}
	ar.Body, ar.Form, ar.PostForm, ar.MultipartForm = http.NoBody, nil, nil, nil
	p, err := h.auth(ar)
	switch {
	case errors.Is(err, ErrUnauthenticated) || err == nil && p.User == "" && !p.Admin:
		return Principal{}, ErrUnauthenticated
	case err != nil:
		return Principal{}, fmt.Errorf("console: Authenticate: %w", err)
	}
	p.Client = "console"
	return p, nil
}

// pageFail renders the error page for err, with the status the API would
// answer.
func (h *Handler) pageFail(pc *pageCall, err error) {
	p := h.problemFor(pc.call, err)
	h.render(pc.w, pc.r, p.Status, "error", pc.data(p.Title, errorData{Status: p.Status, Detail: p.Detail}))
}

func badForm(detail string) error {
	return problemOf(http.StatusBadRequest, "invalid-parameter", detail)
}

// formToken is a fresh token for one render of a form: the operation id
// of its submit derives from it, so a double submit applies once.
func formToken() string { return randomID(18) }

// formOp is the store operation of a form submit: its token (required)
// and what it asks.
func (pc *pageCall) formOp(parts ...string) (*store.Operation, error) {
	tok := pc.r.PostFormValue("token")
	if tok == "" || len(tok) > MaxIdempotencyKeyChars {
		return nil, badForm("the form lacks its token: reload the page and submit again")
	}
	return pc.operationFor("form:"+tok, parts...), nil
}

// formText is a textarea's value with the browser's CRLF line ends made
// LF again.
func formText(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// Sign-in and out.

type signinData struct {
	Error string
	// Expired says the session ended (expired, signed out elsewhere);
	// Revoked that its key is no longer accepted. Each is a fixed notice
	// picked by a code of the URL, never text from it.
	Expired, Revoked bool
}

func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h.render(w, r, http.StatusOK, "signin", &pageData{Base: pageBase(r), Title: "Sign in",
		Data: signinData{Expired: q.Get("expired") == "1", Revoked: q.Get("revoked") == "1"}})
}

// signin resolves the key typed in through Options.Authenticate, as if it
// came as a bearer token, and starts a session for its principal.
func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	base := pageBase(r)
	key := strings.TrimSpace(r.PostFormValue("key"))
	fail := func(status int, msg string) {
		h.render(w, r, status, "signin", &pageData{Base: base, Title: "Sign in", Data: signinData{Error: msg}})
	}
	if key == "" {
		fail(http.StatusBadRequest, "Type your API key.")
		return
	}
	p, err := h.resolveKey(r, key)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		fail(http.StatusUnauthorized, "That key is not known here.")
		return
	case err != nil:
		h.log.ErrorContext(r.Context(), "agentmem/console: sign-in failed", "error_kind", store.ErrorKind(err))
		fail(http.StatusInternalServerError, "The server could not check the key; the error is in its log.")
		return
	}
	id, exp := h.sessions.create(p, key)
	h.setSessionCookie(w, r, base, id, exp)
	securityHeaders(w)
	home := link(base, "ns", p.Namespace()) + "/"
	if p.Admin {
		home = link(base)
	}
	http.Redirect(w, r, home, http.StatusSeeOther)
}

func (h *Handler) signout(w http.ResponseWriter, r *http.Request) {
	base := pageBase(r)
	if ck, err := r.Cookie(sessionCookie); err == nil {
		h.sessions.end(ck.Value)
	}
	h.setSessionCookie(w, r, base, "", time.Time{})
	securityHeaders(w)
	http.Redirect(w, r, link(base, "signin"), http.StatusSeeOther)
}

// Namespaces.

type namespacesData struct {
	Namespaces []NamespaceJSON
	Next       string
}

func (h *Handler) homePage(pc *pageCall) error {
	if !pc.p.Admin {
		http.Redirect(pc.w, pc.r, link(pc.base, "ns", pc.p.Namespace())+"/", http.StatusSeeOther)
		return nil
	}
	after := pc.r.URL.Query().Get("after")
	if after != "" && !validNamespace(after) {
		return badForm("after must be a namespace")
	}
	page, err := h.namespacesPage(pc.r.Context(), after, DefaultNamespacePageSize)
	if err != nil {
		return err
	}
	d := namespacesData{Namespaces: page.Namespaces}
	if page.NextCursor != "" {
		d.Next = link(pc.base) + "?after=" + url.QueryEscape(page.Namespaces[len(page.Namespaces)-1].Name)
	}
	h.render(pc.w, pc.r, http.StatusOK, "namespaces", pc.data("Namespaces", d))
	return nil
}

// Notebook.

type fileRow struct {
	Path, Version, By, Client string
	Chars                     int
}

type notebookData struct {
	Files    []fileRow
	Next     string
	Snapshot string
	Instr    string
	// ImportToken makes the import form's submit exactly once.
	ImportToken string
	// Consolidate shows the "Consolidate now" form (Options.Consolidator
	// is set); ConsolidateToken makes its Apply exactly once.
	Consolidate      bool
	ConsolidateToken string
}

func (h *Handler) notebookPage(pc *pageCall) error {
	ctx := pc.r.Context()
	after := ""
	if a := pc.r.URL.Query().Get("after"); a != "" {
		p, err := pc.storePath(a)
		if err != nil {
			return err
		}
		after = p
	}
	paths, more, err := h.listAfter(ctx, pc.ns+"/", after, pageFiles)
	if err != nil {
		return err
	}
	d := notebookData{Files: []fileRow{}, ImportToken: formToken(), Consolidate: h.model != nil}
	if d.Consolidate {
		d.ConsolidateToken = formToken()
	}
	for _, p := range paths {
		f, err := h.s.Read(ctx, p, wholeFile)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		d.Files = append(d.Files, fileRow{Path: pc.rel(p), Version: f.Version, By: f.Metadata[UpdatedByKey],
			Client: f.Metadata[ClientKey], Chars: utf8.RuneCountInString(f.Content)})
	}
	if more {
		d.Next = pc.nsURL() + "/?after=" + url.QueryEscape(pc.rel(paths[len(paths)-1]))
	}
	if d.Snapshot, err = h.mem.Snapshot(ctx, pc.ns); err != nil {
		return err
	}
	d.Instr = h.mem.Instructions()
	h.render(pc.w, pc.r, http.StatusOK, "notebook", pc.data(pc.ns, d))
	return nil
}

// File view and editor.

type fileData struct {
	Path, Version, Content string
	Metadata               [][2]string
}

func sortedMeta(md map[string]string) [][2]string {
	var out [][2]string
	for k, v := range md {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// pathFile reads the whole file the page's {path} names.
func (h *Handler) pathFile(pc *pageCall) (rel, p string, f *store.File, err error) {
	rel = pc.r.PathValue("path")
	if p, err = pc.storePath(rel); err != nil {
		return "", "", nil, err
	}
	f, err = h.s.Read(pc.r.Context(), p, wholeFile)
	return rel, p, f, err
}

func (h *Handler) filePage(pc *pageCall) error {
	rel, _, f, err := h.pathFile(pc)
	if err != nil {
		return err
	}
	h.render(pc.w, pc.r, http.StatusOK, "file", pc.data(rel, fileData{Path: rel, Version: f.Version, Content: f.Content, Metadata: sortedMeta(f.Metadata)}))
	return nil
}

// editData is the editor's form: Version is the version the page was
// rendered from ("" for a new file), the compare-and-swap of the save.
type editData struct {
	New                           bool
	Path, Version, Content, Token string
	Error                         string
}

func (h *Handler) editPage(pc *pageCall) error {
	rel, _, f, err := h.pathFile(pc)
	if err != nil {
		return err
	}
	h.render(pc.w, pc.r, http.StatusOK, "edit", pc.data("Edit "+rel, editData{Path: rel, Version: f.Version, Content: f.Content, Token: formToken()}))
	return nil
}

func (h *Handler) newPage(pc *pageCall) error {
	h.render(pc.w, pc.r, http.StatusOK, "edit", pc.data("New file", editData{New: true, Path: h.agent + "/", Token: formToken()}))
	return nil
}

// conflictData is the conflict view: the text submitted (kept in the
// form, now against the current version), the current text, and the
// difference from theirs to yours.
type conflictData struct {
	Path, Yours, Theirs, Version, Token, By string
	Deleted                                 bool
	Diff                                    []diffLine
}

// save writes the editor's text as a compare-and-swap on the version the
// form was rendered from, exactly once per form render.
func (h *Handler) save(pc *pageCall) error {
	r := pc.r
	rel := strings.TrimSpace(r.PostFormValue("path"))
	content := formText(r.PostFormValue("content"))
	version := r.PostFormValue("version")
	isNew := r.PostFormValue("new") == "1"
	again := func(status int, msg string) error {
		h.render(pc.w, r, status, "edit", pc.data("Edit "+rel, editData{New: isNew, Path: rel, Version: version, Content: content, Token: formToken(), Error: msg}))
		return nil
	}
	p, err := pc.storePath(rel)
	if err != nil {
		return again(http.StatusBadRequest, "The path is not valid: use \"/\"-separated segments of letters, digits, \"_\", \".\" and \"-\" (such as main/notes.md).")
	}
	op, err := pc.formOp("save", p, version, content)
	if err != nil {
		return err
	}
	_, err = h.putFile(pc.call, p, content, nil, version, op)
	switch {
	case errors.Is(err, store.ErrOperationConflict):
		return again(http.StatusConflict, "This form was already submitted with other text. Your text is below: save it again.")
	case errors.Is(err, store.ErrConflict):
		return h.conflict(pc, rel, p, content)
	case errors.Is(err, store.ErrTooLarge), errors.As(err, new(*http.MaxBytesError)):
		return again(http.StatusRequestEntityTooLarge, "The text is over the store's size limit; nothing was saved.")
	case errors.Is(err, store.ErrPathCollision):
		return again(http.StatusConflict, "A file and a folder would share that name; pick another path.")
	case errors.Is(err, store.ErrInvalidContent), errors.Is(err, store.ErrInvalidPath):
		return again(http.StatusBadRequest, "The path or the text is not valid; nothing was saved.")
	case err != nil:
		return err
	}
	pc.redirectNS("Saved.", nil, "files", rel)
	return nil
}

// conflict renders the conflict view (409): the file changed since the
// editor was rendered; the submitted text stays in the form.
func (h *Handler) conflict(pc *pageCall, rel, p, yours string) error {
	d := conflictData{Path: rel, Yours: yours, Token: formToken()}
	f, err := h.s.Read(pc.r.Context(), p, wholeFile)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.Deleted = true
	case err != nil:
		return err
	default:
		d.Theirs, d.Version, d.By = f.Content, f.Version, f.Metadata[UpdatedByKey]
	}
	if u := unifiedDiff(rel+" (theirs)", rel+" (yours)", d.Theirs, d.Yours); u != "" {
		d.Diff = diffLines(u)
	}
	h.render(pc.w, pc.r, http.StatusConflict, "conflict", pc.data("Conflict on "+rel, d))
	return nil
}

// deleteData is the delete confirmation: the file as it is now, and the
// form that deletes that version.
type deleteData struct {
	Path, Version, Content, Token string
	// History says the store keeps history: a deleted file can be
	// restored from it.
	History bool
}

// deletePage asks to confirm the delete of a file, showing what it holds
// and whether it can be restored afterwards; the file page's Delete links
// here.
func (h *Handler) deletePage(pc *pageCall) error {
	rel, p, f, err := h.pathFile(pc)
	if err != nil {
		return err
	}
	d := deleteData{Path: rel, Version: f.Version, Content: f.Content, Token: formToken(), History: h.keepsHistory(pc, p, f.Version)}
	h.render(pc.w, pc.r, http.StatusOK, "delete", pc.data("Delete "+rel, d))
	return nil
}

// keepsHistory reports whether the store's history recorded version of p,
// the current one or the one just deleted (so among its newest two
// entries): then a delete of that version can be undone by restoring it.
func (h *Handler) keepsHistory(pc *pageCall, p, version string) bool {
	page, err := h.s.History(pc.r.Context(), store.HistoryRequest{Path: p, Limit: 2})
	return err == nil && slices.ContainsFunc(page.Entries, func(e store.HistoryEntry) bool { return e.Version == version && !e.Deleted })
}

// deleteForm deletes the version of a file its confirmation showed
// (confirm=1), exactly once per form render; without confirm=1 (a form of
// an older page) it shows the confirmation instead. The notebook then
// says what was deleted and links to the version to restore, when the
// store keeps history.
func (h *Handler) deleteForm(pc *pageCall) error {
	rel := pc.r.PostFormValue("path")
	p, err := pc.storePath(rel)
	if err != nil {
		return err
	}
	if pc.r.PostFormValue("confirm") != "1" {
		pc.r.SetPathValue("path", rel)
		return h.deletePage(pc)
	}
	version := pc.r.PostFormValue("version")
	if version == "" {
		return badForm("the form lacks the version it deletes: reload the file and delete again")
	}
	op, err := pc.formOp("delete", p, version)
	if err != nil {
		return err
	}
	if _, err := h.deletePath(pc.call, p, version, op); errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict) {
		return problemOf(http.StatusConflict, "precondition-failed", "the file changed since you opened it; nothing was deleted: open it again")
	} else if err != nil {
		return err
	}
	if h.keepsHistory(pc, p, version) {
		pc.redirectNS("Deleted "+rel+".", &flashLink{URL: pc.nsURL("versions", rel) + "?v=" + url.QueryEscape(version), Label: "Restore it from its history"})
	} else {
		pc.redirectNS("Deleted "+rel+". This store keeps no history of it, so it cannot be restored.", nil)
	}
	return nil
}

// History, versions, diff, restore.

type historyRow struct {
	EntryJSON
	By, Client string
	DiffURL    string
	// First marks a file's first (newest) row on the page.
	First bool
}

type historyData struct {
	Path string // "" for the namespace's history
	Rows []historyRow
	// Next is the URL of the next page of this history, "" on the last.
	Next    string
	Current string
}

// historyPage lists the changes of one file (with a path) or of the whole
// namespace in the API's order (GET …/history, agentmem log --prefix): by
// path, and newest first within each file; pageHistory a page, the next
// page behind the API's cursor.
func (h *Handler) historyPage(pc *pageCall) error {
	ctx := pc.r.Context()
	rel := pc.r.PathValue("path")
	req := store.HistoryRequest{Prefix: pc.ns + "/", Limit: pageHistory}
	kind := "history"
	if rel != "" {
		p, err := pc.storePath(rel)
		if err != nil {
			return err
		}
		req.Path, kind = p, "history:"+p
	}
	var err error
	if req.After, err = readCursor(pc.call, kind); err != nil {
		return err
	}
	page, err := h.s.History(ctx, req)
	if err != nil {
		return err
	}
	d := historyData{Path: rel}
	if c := makeCursor(kind, pc.ns, page.Next); c != "" {
		d.Next = pc.nsURL("history", rel) + "?cursor=" + url.QueryEscape(c)
		if rel == "" {
			d.Next = pc.nsURL("history") + "/?cursor=" + url.QueryEscape(c)
		}
	}
	for i := range page.Entries {
		e := pc.entry(&page.Entries[i])
		row := historyRow{EntryJSON: e, By: e.Metadata[UpdatedByKey], Client: e.Metadata[ClientKey]}
		if e.Previous != "" && e.Kind != "delete" {
			row.DiffURL = pc.nsURL("diff", e.Path) + "?from=" + url.QueryEscape(e.Previous) + "&to=" + url.QueryEscape(e.Version)
		}
		row.First = i == 0 || page.Entries[i-1].Path != page.Entries[i].Path
		d.Rows = append(d.Rows, row)
	}
	title := "History of " + pc.ns
	if rel != "" {
		title = "History of " + rel
		if f, err := h.s.Read(ctx, req.Path, 1); err == nil {
			d.Current = f.Version
		}
	}
	h.render(pc.w, pc.r, http.StatusOK, "history", pc.data(title, d))
	return nil
}

type versionData struct {
	EntryJSON
	Content, Current, Token string
	Metadata                [][2]string
	IsCurrent, Absent       bool
}

func (h *Handler) versionPage(pc *pageCall) error {
	ctx := pc.r.Context()
	rel := pc.r.PathValue("path")
	p, err := pc.storePath(rel)
	if err != nil {
		return err
	}
	v := pc.r.URL.Query().Get("v")
	if v == "" {
		return badForm("v is required: a version from the file's history")
	}
	e, err := h.s.ReadVersion(ctx, p, v)
	if err != nil {
		return err
	}
	d := versionData{EntryJSON: pc.entry(e), Content: e.Content, Token: formToken(), Metadata: sortedMeta(e.Metadata)}
	f, err := h.s.Read(ctx, p, 1)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.Absent = true
	case err != nil:
		return err
	default:
		d.Current, d.IsCurrent = f.Version, f.Version == e.Version
	}
	h.render(pc.w, pc.r, http.StatusOK, "version", pc.data(rel+" @ "+v, d))
	return nil
}

type diffData struct {
	DiffJSON
	Lines []diffLine
}

func (h *Handler) diffPage(pc *pageCall) error {
	rel := pc.r.PathValue("path")
	p, err := pc.storePath(rel)
	if err != nil {
		return err
	}
	q := pc.r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	if from == "" {
		return badForm("pick the version to compare from")
	}
	d, err := h.diffOf(pc.r.Context(), p, rel, from, to)
	if err != nil {
		return err
	}
	dd := diffData{DiffJSON: d}
	if d.Diff != "" {
		dd.Lines = diffLines(d.Diff)
	}
	h.render(pc.w, pc.r, http.StatusOK, "diff", pc.data("Diff of "+rel, dd))
	return nil
}

// restoreForm writes a past version back as a compare-and-swap on the
// version the page showed as current ("" when the file was absent),
// exactly once per form render.
func (h *Handler) restoreForm(pc *pageCall) error {
	rel := pc.r.PostFormValue("path")
	p, err := pc.storePath(rel)
	if err != nil {
		return err
	}
	version, current := pc.r.PostFormValue("version"), pc.r.PostFormValue("current")
	if version == "" {
		return badForm("the form lacks the version to restore")
	}
	op, err := pc.formOp("restore", p, version, current)
	if err != nil {
		return err
	}
	if _, err := h.restorePath(pc.call, p, version, current, op); errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict) {
		return problemOf(http.StatusConflict, "precondition-failed", "the file changed since you opened this version; nothing was restored: open its history again")
	} else if err != nil {
		return err
	}
	pc.redirectNS("Restored version "+shortVersion(version)+".", nil, "files", rel)
	return nil
}

// Search.

type searchData struct {
	Query  string
	Result *SearchJSON
}

func (h *Handler) searchPage(pc *pageCall) error {
	q := pc.r.URL.Query().Get("q")
	d := searchData{Query: q}
	if strings.TrimSpace(q) != "" {
		res, err := h.searchFolder(pc.call, q, h.agent+"/", h.limits.MaxSearchResults)
		if err != nil {
			return err
		}
		d.Result = &res
	}
	h.render(pc.w, pc.r, http.StatusOK, "search", pc.data("Search", d))
	return nil
}

func (h *Handler) exportPage(pc *pageCall) error { return h.export(pc.call) }

// Forget.

type forgetData struct {
	Error  string
	Result *ForgetJSON
}

func (h *Handler) forgetPage(pc *pageCall) error {
	if !pc.p.Admin {
		return problemOf(http.StatusForbidden, "admin-required", "forgetting a namespace needs an admin")
	}
	h.render(pc.w, pc.r, http.StatusOK, "forget", pc.data("Forget "+pc.ns, forgetData{}))
	return nil
}

// forgetForm forgets the namespace when its name was typed.
func (h *Handler) forgetForm(pc *pageCall) error {
	if !pc.p.Admin {
		return problemOf(http.StatusForbidden, "admin-required", "forgetting a namespace needs an admin")
	}
	if pc.r.PostFormValue("confirm") != pc.ns {
		h.render(pc.w, pc.r, http.StatusBadRequest, "forget", pc.data("Forget "+pc.ns,
			forgetData{Error: "Type the namespace's name exactly to confirm; nothing was erased."}))
		return nil
	}
	out, err := h.forgetNamespace(pc.r.Context(), pc.ns)
	var p *Problem
	if err != nil && !(errors.As(err, &p) && p.Status == http.StatusConflict) {
		return err
	}
	status := http.StatusOK
	if p != nil {
		status = http.StatusConflict
	}
	h.render(pc.w, pc.r, status, "forgotten", pc.data("Forgot "+pc.ns, forgetData{Result: &out}))
	return nil
}
