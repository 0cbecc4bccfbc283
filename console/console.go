package console

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// DefaultMaxBodyBytes bounds a request body by default (1 MiB), as MCP's
// HTTP handler does.
const DefaultMaxBodyBytes = 1 << 20

// DefaultMaxImportBytes bounds an imported archive by default (64 MiB).
const DefaultMaxImportBytes = 64 << 20

// Metadata keys the API stamps on every write and restore it makes. A
// request cannot set them itself.
const (
	// UpdatedByKey holds the principal's user: the key that core/memory's
	// WriteMetadata examples and agentmem log use for who made a change.
	UpdatedByKey = store.UpdatedByKey
	// ClientKey holds the principal's client (Principal.Client), when set.
	ClientKey = "client"
)

// ErrUnauthenticated is what Options.Authenticate returns (or wraps) for a
// request without credentials or with unknown ones: the API answers 401
// with WWW-Authenticate: Bearer realm="agentmem". Any other error from
// Authenticate is a server failure (500): a key file that cannot be read
// fails closed, as in MCP's HTTP handler.
var ErrUnauthenticated = errors.New("console: missing or unknown credentials: send Authorization: Bearer <key>")

// ErrOptions reports invalid Options given to [New].
var ErrOptions = errors.New("console: invalid options")

// Principal is who a request comes from, as Options.Authenticate resolves
// it.
type Principal struct {
	// User is the authenticated user id (an API key's user, a token's user
	// claim). A principal that is not Admin reaches only the namespace
	// memory.EscapeNamespace(User): the notebook MCP's HTTP server gives the
	// same user. It is recorded with every write under [UpdatedByKey].
	User string
	// Admin reaches every namespace and the admin-only operations (listing
	// namespaces, forgetting one).
	Admin bool
	// Client names what sent the request (an API key's label, an OAuth
	// client id, "console"); recorded with every write under [ClientKey]
	// when not empty.
	Client string
}

// Namespace is the namespace a user principal reaches:
// memory.EscapeNamespace(User), "" for no user.
func (p Principal) Namespace() string { return memory.EscapeNamespace(p.User) }

// Options configures [New]. Authenticate is required.
type Options struct {
	// Authenticate resolves the principal of every request but the OpenAPI
	// document's, and of every page request of a console session (with the
	// key the session signed in with, as a bearer token). Return an error wrapping [ErrUnauthenticated] for missing
	// or unknown credentials (401); any other error answers 500. A
	// principal with neither a User nor Admin is refused with 401.
	// agentmem serve fills it from MCP's API keys and OAuth verifier.
	Authenticate func(*http.Request) (Principal, error)
	// ResourceMetadataURL, when set, is added to the WWW-Authenticate
	// header of a 401 as resource_metadata (RFC 9728), as an OAuth
	// resource server does.
	ResourceMetadataURL string
	// Memory configures the notebook whose injected block the snapshot
	// route returns (agent name, heading, limits, guidance) and whose
	// limits bound search. Namespace and NamespaceFunc must be unset: the
	// namespace comes from the URL. nil means memory's defaults.
	Memory *memory.Options
	// MaxBodyBytes bounds the body of a file write or a restore; a larger
	// one is refused with 413 (problem too-large) and writes nothing.
	// Default [DefaultMaxBodyBytes]; agentmem serve --max-body.
	MaxBodyBytes int64
	// MaxImportBytes bounds the archive of an import (the API's body, the
	// page's upload), which MaxBodyBytes does not; a larger one is refused
	// with 413 and writes nothing. Default [DefaultMaxImportBytes];
	// agentmem serve --max-import. A proxy in front must let bodies of
	// both sizes through (docs/deploy.md).
	MaxImportBytes int64
	// Logger receives an Error record for each request that failed on the
	// server's side (500), with the operation and the error's kind
	// (store.ErrorKind). nil means slog.Default.
	Logger *slog.Logger
	// LogDetails adds the error text, which may name paths, to the
	// Logger's records.
	LogDetails bool
	// SessionTTL is how long a console sign-in lasts; default
	// [DefaultSessionTTL]. A session keeps the key it signed in with (in
	// the server's memory only) and resolves it through Authenticate again
	// on every page request: a key removed or demoted ends or narrows its
	// sessions at once, as it does its API calls.
	SessionTTL time.Duration
	// SecureCookie marks the session cookie Secure on every response. Set
	// it when browsers reach the console over HTTPS through a proxy that
	// terminates TLS (agentmem serve --public-url https://…): the console
	// itself sees plain HTTP then. Without it the cookie is Secure only for
	// a request that came over TLS to this server.
	SecureCookie bool
	// Consolidator is the model behind consolidation (pruned.Consolidate):
	// POST /api/v1/namespaces/{ns}/consolidate and the notebook page's
	// "Consolidate now". nil turns the feature off: the route answers 501
	// (problem consolidation-not-configured) and the page shows no button.
	Consolidator pruned.Model
	// ConsolidateOptions are the defaults of every consolidation (pruned
	// file, token budget, prompt, model id, metadata); nil means
	// core/memory's. DryRun is the request's (?dry_run=1, the page's
	// Preview), and the console adds [RequestedByKey] and [ClientKey] to
	// Metadata.
	ConsolidateOptions *pruned.ConsolidateOptions
	// ConsolidateRecordRetention is how long the record of a consolidate
	// request made with an Idempotency-Key (or from the page's form) is
	// kept: a retry within it is answered from the record. Older records
	// are deleted as new ones are made (see [RecordedAtKey]). Default
	// [DefaultConsolidateRecordRetention]; negative is refused.
	ConsolidateRecordRetention time.Duration
}

// Handler serves the JSON API of one store under /api/v1/. It is an
// [http.Handler], safe for concurrent use; mount it at the root of a mux,
// or under a prefix with http.StripPrefix:
//
//	mux.Handle("/console/", http.StripPrefix("/console", h))
type Handler struct {
	s          *store.Store
	mem        *memory.Memory
	agent      string
	limits     memory.Limits
	auth       func(*http.Request) (Principal, error)
	resMeta    string
	maxBody    int64
	maxImport  int64
	log        *slog.Logger
	logDetails bool
	mux        *http.ServeMux
	pages      map[string]*template.Template
	cop        *http.CrossOriginProtection
	sessions   *sessions
	// secureCookie is Options.SecureCookie.
	secureCookie bool
	// model is Options.Consolidator with its errors marked; nil = off.
	model           pruned.Model
	consolidateOpts pruned.ConsolidateOptions
	// recordRetention is Options.ConsolidateRecordRetention, defaulted.
	recordRetention time.Duration
	// now is the clock of the records' retention (tests replace it).
	now func() time.Time
	// observe, when set (by tests), is told the operation and status of
	// every response.
	observe func(op string, status int)
	// keyed serialises this handler's consolidate requests of one key.
	keyed keyLocks
}

// New returns the API handler over s. It does no I/O: every request reads
// the store under its own context. It fails with [ErrOptions] when s or
// opts.Authenticate is nil, MaxBodyBytes or MaxImportBytes is negative,
// opts.Memory sets a namespace or is refused by memory.New,
// opts.ConsolidateOptions holds invalid Metadata, or
// ConsolidateRecordRetention is negative.
func New(s *store.Store, opts *Options) (*Handler, error) {
	if s == nil || s.Backend() == "" { // no driver
		return nil, fmt.Errorf("%w: pass a store with a driver to serve", ErrOptions)
	}
	if opts == nil || opts.Authenticate == nil {
		return nil, fmt.Errorf("%w: Authenticate is required (it decides who may reach which namespace)", ErrOptions)
	}
	if opts.SessionTTL < 0 {
		return nil, fmt.Errorf("%w: SessionTTL must be positive, got %v", ErrOptions, opts.SessionTTL)
	}
	if opts.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("%w: MaxBodyBytes must be positive, got %d", ErrOptions, opts.MaxBodyBytes)
	}
	if opts.MaxImportBytes < 0 {
		return nil, fmt.Errorf("%w: MaxImportBytes must be positive, got %d", ErrOptions, opts.MaxImportBytes)
	}
	if opts.ConsolidateRecordRetention < 0 {
		return nil, fmt.Errorf("%w: ConsolidateRecordRetention must be positive, got %v", ErrOptions, opts.ConsolidateRecordRetention)
	}
	var co pruned.ConsolidateOptions
	if opts.ConsolidateOptions != nil {
		co = *opts.ConsolidateOptions
		if err := store.ValidateMetadata(co.Metadata); err != nil {
			return nil, fmt.Errorf("%w: ConsolidateOptions.Metadata: %w", ErrOptions, err)
		}
	}
	var mo memory.Options
	if opts.Memory != nil {
		mo = *opts.Memory
	}
	if mo.Namespace != "" || mo.NamespaceFunc != nil {
		return nil, fmt.Errorf("%w: Memory.Namespace and Memory.NamespaceFunc must be unset: the namespace comes from the URL", ErrOptions)
	}
	mo.InjectionErrors = memory.RaiseErrors // a failed snapshot is an error here, not an empty block
	mem, err := memory.New(s, &mo)
	if err != nil {
		return nil, fmt.Errorf("%w: Memory: %w", ErrOptions, err)
	}
	h := &Handler{
		s:               s,
		mem:             mem,
		agent:           cmp.Or(mo.AgentName, memory.DefaultAgentName),
		auth:            opts.Authenticate,
		resMeta:         opts.ResourceMetadataURL,
		maxBody:         opts.MaxBodyBytes,
		maxImport:       cmp.Or(opts.MaxImportBytes, DefaultMaxImportBytes),
		log:             opts.Logger,
		logDetails:      opts.LogDetails,
		mux:             http.NewServeMux(),
		consolidateOpts: co,
		secureCookie:    opts.SecureCookie,
		recordRetention: cmp.Or(opts.ConsolidateRecordRetention, DefaultConsolidateRecordRetention),
		now:             time.Now,
	}
	if opts.Consolidator != nil {
		h.model = markModel(opts.Consolidator)
	}
	h.sessions = newSessions(cmp.Or(opts.SessionTTL, DefaultSessionTTL))
	h.limits = withDefaultLimits(mo.Limits)
	if h.maxBody == 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	// The API's patterns are served without a method (dispatch answers
	// 405 as a problem); registerPages serves the pages' with one.
	byPattern := map[string][]*route{}
	var order []string
	for i := range routes {
		rt := &routes[i]
		if rt.isPage() {
			continue
		}
		if byPattern[rt.pattern] == nil {
			order = append(order, rt.pattern)
		}
		byPattern[rt.pattern] = append(byPattern[rt.pattern], rt)
	}
	for _, p := range order {
		h.mux.Handle(p, h.dispatch(byPattern[p]))
	}
	h.mux.HandleFunc(apiRoot, func(w http.ResponseWriter, r *http.Request) {
		h.problem(w, "", problemOf(http.StatusNotFound, "no-such-route", "no API route answers "+r.URL.Path+": see "+apiRoot+"openapi.json"))
	})
	if err := h.registerPages(); err != nil {
		return nil, fmt.Errorf("console: the embedded pages: %w", err)
	}
	return h, nil
}

// apiRoot is the prefix of every API path.
const apiRoot = "/api/v1/"

// ServeHTTP serves the API. A path that is not clean (".", "..", an empty
// segment, also when percent-encoded) is refused with 400 before routing,
// so no redirect leads a request elsewhere.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p != cleanPath(p) {
		h.problem(w, "", problemOf(http.StatusBadRequest, "invalid-path", "the URL path holds \".\", \"..\" or an empty segment: send a clean path"))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// cleanPath is p cleaned, keeping a trailing "/".
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// call is one request being served by one route.
type call struct {
	w  *recorder
	r  *http.Request
	p  Principal
	ns string // the namespace of the URL, checked against p; "" for routes without one
	// path is the store path of the file the route names (its URL's
	// {path...}, or a page form's "path"), relPath the same relative to
	// ns; both "" for routes without one.
	path, relPath string
	// file is the whole file at path, read before a route that reads it
	// runs.
	file *store.File
	rt   *route
}

// recorder remembers the status written.
type recorder struct {
	http.ResponseWriter
	status int
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// dispatch serves the routes of one pattern: picks the method's route
// (405 with Allow otherwise), authenticates, authorizes and runs it.
func (h *Handler) dispatch(rs []*route) http.Handler {
	var allow []string
	for _, rt := range rs {
		allow = append(allow, rt.method)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rt *route
		for _, x := range rs {
			if x.method == r.Method {
				rt = x
			}
		}
		if rt == nil {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			h.problem(w, "", problemOf(http.StatusMethodNotAllowed, "method-not-allowed", r.Method+" is not allowed here; allowed: "+strings.Join(allow, ", ")))
			return
		}
		rec := &recorder{ResponseWriter: w}
		c := &call{w: rec, r: r, rt: rt}
		defer func() {
			if h.observe != nil && rec.status != 0 {
				h.observe(rt.op, rec.status)
			}
		}()
		if err := h.admit(c); err != nil {
			h.fail(c, err)
			return
		}
		if err := rt.serve(h, c); err != nil {
			h.fail(c, err)
		}
	})
}

// admit authenticates c and checks that its principal may use its route
// (admitRoute).
func (h *Handler) admit(c *call) error {
	if c.rt.role == rolePublic {
		return nil
	}
	p, err := h.auth(c.r)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		return errUnauthenticated
	case err != nil:
		return fmt.Errorf("console: Authenticate: %w", err)
	case p.User == "" && !p.Admin:
		return errUnauthenticated
	}
	c.p = p
	return h.admitRoute(c)
}

// admitRoute is the one check of what c's route needs of its principal,
// for the API and the pages alike: its namespace (a user principal asking
// for another one gets 404, exactly as for a namespace that does not
// exist, so that a key learns nothing about other users), then its role
// (403 admin-required); then it resolves the file path the route names
// (400 for a bad one) and, for a route that reads it, the file (404 when
// it is absent).
func (h *Handler) admitRoute(c *call) error {
	if c.rt.namespaced {
		if err := c.admitNamespace(c.r.PathValue("ns")); err != nil {
			return err
		}
	}
	if c.rt.role == roleAdmin && !c.p.Admin {
		return problemOf(http.StatusForbidden, "admin-required", "this operation needs an admin principal")
	}
	var rel string
	switch {
	case c.rt.formPath:
		rel = c.r.PostFormValue("path")
	case strings.HasSuffix(c.rt.pattern, filePattern):
		rel = c.r.PathValue("path")
	default:
		return nil
	}
	p, err := c.storePath(rel)
	if err != nil {
		return err
	}
	c.path, c.relPath = p, rel
	if c.rt.read {
		c.file, err = h.s.Read(c.r.Context(), p, wholeFile)
	}
	return err
}

// admitNamespace sets c's namespace to ns when c's principal may reach
// it: the API and the pages check access here.
func (c *call) admitNamespace(ns string) error {
	if !c.p.Admin && ns != c.p.Namespace() {
		return errNoNamespace(ns)
	}
	if !validNamespace(ns) {
		return problemOf(http.StatusBadRequest, "invalid-namespace", "a namespace is one path segment of [A-Za-z0-9_.-] (memory.EscapeNamespace of a user id)")
	}
	c.ns = ns
	return nil
}

func errNoNamespace(ns string) error {
	return problemOf(http.StatusNotFound, "namespace-not-found", fmt.Sprintf("no namespace %q is visible to this principal", ns))
}

var errUnauthenticated = problemOf(http.StatusUnauthorized, "unauthenticated", "send Authorization: Bearer <API key or token>")

// validNamespace reports whether ns is one valid path segment.
func validNamespace(ns string) bool {
	return ns != "" && !strings.Contains(ns, "/") && store.ValidatePath(ns) == nil
}

// storePath is the store path of rel, a path relative to c's namespace.
func (c *call) storePath(rel string) (string, error) {
	if err := store.ValidatePath(rel); err != nil {
		return "", err
	}
	return c.ns + "/" + rel, nil
}

// rel is the namespace-relative form of a store path of c's namespace.
func (c *call) rel(p string) string { return strings.TrimPrefix(p, c.ns+"/") }

// withDefaultLimits fills memory's defaults into l's zero fields.
func withDefaultLimits(l memory.Limits) memory.Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxMemorySize, memory.DefaultMaxMemorySize)
	def(&l.MaxSearchResults, memory.DefaultMaxSearchResults)
	def(&l.MaxSearchResultChars, memory.DefaultMaxSearchResultChars)
	def(&l.MaxSearchFiles, memory.DefaultMaxSearchFiles)
	return l
}
