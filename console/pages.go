package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
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
	"history", "version", "diff", "search", "forget", "forgotten", "imported", "consolidated", "delete", "folder",
	"deleted", "activity"}

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
		"marks": pieces,
	}
	funcs["crumbs"] = crumbs // the breadcrumbs of parts.html
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
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
	h.mux.Handle("/", h.public(func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "error", &pageData{Base: pageBase(r), Title: "Not found",
			Data: errorData{Status: http.StatusNotFound, Detail: "no page answers this address"}})
	}))
	for i := range routes {
		if rt := &routes[i]; rt.isPage() {
			h.mux.Handle(rt.method+" "+rt.pattern, h.page(rt))
		}
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
	return &pageData{Base: pc.base, Title: title, P: &p, NS: pc.ns, Home: homeURL(pc.base, p), Data: d,
		Flash: pc.t.takeFlash(pc.sid, pc.r.URL.Path)}
}

// homeURL is p's start page: an admin's the namespaces, a user's its
// notebook.
func homeURL(base string, p Principal) string {
	if p.Admin {
		return link(base)
	}
	return link(base, "ns", p.Namespace()) + "/"
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

// page serves the page rt, behind cross-origin protection. A public one
// needs no session. Any other, without a live session, redirects to the
// sign-in page; the session's key is resolved through
// Options.Authenticate again first, so a key that is no longer known ends
// the session (to sign-in, nothing done) and a changed role applies at
// once; then the principal must have what rt needs ([Handler.admitRoute], as
// in the API).
func (h *Handler) page(rt *route) http.Handler {
	return h.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := pageBase(r)
		pc := &pageCall{call: &call{w: &recorder{ResponseWriter: w}, r: r, rt: rt}, base: base, t: h.sessions}
		if rt.role == rolePublic {
			if err := rt.show(h, pc); err != nil {
				h.pageFail(pc, err)
			}
			return
		}
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
		pc.sid, pc.p = ck.Value, s.p
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
		if err := h.admitRoute(pc.call); err != nil {
			h.pageFail(pc, err)
			return
		}
		if err := rt.show(h, pc); err != nil {
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
