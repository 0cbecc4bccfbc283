package memory

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/memory/internal/notes"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// Defaults of [Options] and [Limits], as in the reference notebook (the
// Python notebook agentmem ports; docs/guarantees.md, "The reference
// notebook").
const (
	DefaultAgentName            = "main"
	DefaultMaxTokens            = 2000
	DefaultMaxLines             = 200
	DefaultMaxMemorySize        = 65536
	DefaultMaxSearchResults     = 10
	DefaultMaxSearchResultChars = 4000
	DefaultMaxSearchFiles       = 1000
)

// MainFile is the main notebook's file name.
const MainFile = notes.MainFile

// NoLines, as [Limits.MaxLines], shows no MEMORY.md lines in the injected
// snapshot (only the file list).
const NoLines = -1

// ErrorMode says what happens when loading the injected snapshot fails.
type ErrorMode string

// The two error modes.
const (
	// IgnoreErrors (the default) continues without a snapshot, logs the
	// failure at Warn ([Options.Logger]) and records it in telemetry.
	IgnoreErrors ErrorMode = "ignore"
	// RaiseErrors returns the error from [Memory.Snapshot], so the run fails.
	RaiseErrors ErrorMode = "raise"
)

// Limits bound everything the notebook reads, injects and returns. A zero
// field means its default; a negative one is refused by [New] (except
// MaxLines = [NoLines]).
type Limits struct {
	// MaxTokens is the total injection budget (guidance, delimiters,
	// MEMORY.md excerpt and file list), at 4 characters per token.
	// Default 2,000.
	MaxTokens int
	// MaxLines caps the MEMORY.md lines shown (the last ones). Default 200.
	MaxLines int
	// MaxMemorySize is the per-file bound, in characters, of every read,
	// of search's per-file scan, and of the files write_memory produces.
	// Default 65,536.
	MaxMemorySize int
	// MaxSearchResults bounds the matches of one search. Default 10.
	MaxSearchResults int
	// MaxSearchResultChars bounds the file names plus snippets of one
	// search, in characters. Default 4,000.
	MaxSearchResultChars int
	// MaxSearchFiles bounds the files one search scans. Default 1,000.
	MaxSearchFiles int
}

// Options configures a [Memory]. The zero value (or nil) means defaults.
type Options struct {
	// AgentName is the storage segment inside the namespace: files live at
	// <namespace>/<AgentName>/<file>. It is never shown to the model.
	// Default "main".
	AgentName string
	// Heading, when set, labels the guidance and the injected block as
	// "## <Heading>". Give each memory on one agent its own heading.
	Heading string
	// Namespace is a fixed namespace ("/"-separated path segments, none "."
	// or containing ".."). Set at most one of Namespace and NamespaceFunc.
	Namespace string
	// NamespaceFunc resolves the namespace from the call's context (for
	// example the framework's user id). It runs on every tool call and
	// snapshot (once for a call given the Scope [Memory.Resolve] returned),
	// so keep it cheap and deterministic. Its errors are always returned.
	NamespaceFunc func(ctx context.Context) (string, error)
	// Limits bound reads, injection and search.
	Limits Limits
	// SearchMode is how search_memory ranks files: "" or
	// [search.BM25] (the default), or [search.Literal], the
	// reference notebook's term counts.
	SearchMode search.Mode
	// SearchRecencyHalfLife, when positive, makes search_memory weigh
	// recent files more: a match's score is scaled by a decay on its
	// file's last write with this half-life, by at most
	// [search.RecencyWeight], so it reorders near-equal matches and never
	// adds or removes one (see search.Request.RecencyHalfLife). 0, the
	// default, is off; negative is an error.
	SearchRecencyHalfLife time.Duration
	// Guidance overrides the usage guidance put in the instructions: nil
	// means the default guidance (about 200 tokens); a pointer to "" means no guidance (and no
	// instructions at all).
	Guidance *string
	// DisableInjection turns off the snapshot: [Memory.Snapshot] returns ""
	// without touching the store. The tools and the guidance stay.
	DisableInjection bool
	// InjectionErrors says what a snapshot failure does. Default
	// [IgnoreErrors].
	InjectionErrors ErrorMode
	// WriteMetadata is recorded with every write the model makes, for
	// example {"updated_by": "agent"}, and with every delete in the
	// store's history (store.Options.History). Set at most one of
	// WriteMetadata and WriteMetadataFunc.
	WriteMetadata map[string]string
	// WriteMetadataFunc resolves the metadata for each write from the
	// call's context. It runs before the write request; a replay never
	// stores its result. On a store without an atomic mutation a replay is
	// found by a receipt lookup first and skips it; on an atomic store the
	// write request itself answers a replay, so it runs then too.
	WriteMetadataFunc func(ctx context.Context) (map[string]string, error)
	// ToolPrefix, when set, names the tools <ToolPrefix>_write_memory and so
	// on, so that several memories can share one agent.
	ToolPrefix string
	// Tracer receives content-free spans; nil means none.
	Tracer Tracer
	// Logger receives a Warn record for each failure the notebook swallows
	// by design: a snapshot that failed in [IgnoreErrors] mode, so that an
	// agent never loses its memory silently. nil means [slog.Default]. The
	// records carry the backend and the error, never stored content.
	Logger *slog.Logger
}

// Memory is one notebook capability over a store. It is safe for
// concurrent use and never changes after [New].
type Memory struct {
	s        *store.Store
	agent    string
	heading  string
	ns       string
	nsFunc   func(context.Context) (string, error)
	limits   Limits
	guidance string
	instr    string // rendered guidance, see Instructions
	inject   bool
	errMode  ErrorMode
	meta     map[string]string
	metaFunc func(context.Context) (map[string]string, error)
	prefix   string
	tracer   Tracer
	logger   *slog.Logger
	backend  string
	names    toolNames
	mode     search.Mode
	recency  time.Duration // search_memory's RecencyHalfLife
}

// New returns a Memory over s. A nil s is an error wrapping
// store.ErrNilArgument. It fails when an option is invalid: a
// negative limit, an agent name that is not one path segment, an invalid
// fixed namespace, both forms of namespace or metadata set, an unknown
// error mode, invalid fixed metadata, an invalid tool prefix, or an unknown
// search mode (store.ErrInvalidSearchMode).
func New(s *store.Store, opts *Options) (*Memory, error) {
	if s == nil {
		return nil, fmt.Errorf("memory: pass New a store (store.New or store.Open), not nil: %w", store.ErrNilArgument)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Memory{
		s:        s,
		agent:    cmp.Or(o.AgentName, DefaultAgentName),
		heading:  o.Heading,
		ns:       o.Namespace,
		nsFunc:   o.NamespaceFunc,
		guidance: "",
		inject:   !o.DisableInjection,
		errMode:  ErrorMode(cmp.Or(string(o.InjectionErrors), string(IgnoreErrors))),
		metaFunc: o.WriteMetadataFunc,
		prefix:   o.ToolPrefix,
		tracer:   o.Tracer,
		logger:   o.Logger,
		backend:  s.Backend(),
	}
	if err := store.ValidatePath(m.agent); err != nil || strings.Contains(m.agent, "/") {
		return nil, fmt.Errorf("memory: agent name must be one path segment of [A-Za-z0-9_.-]: %w", store.ErrInvalidPath)
	}
	if o.Namespace != "" && o.NamespaceFunc != nil {
		return nil, errors.New("memory: set Namespace or NamespaceFunc, not both")
	}
	if o.Namespace != "" {
		if err := validateNamespace(o.Namespace); err != nil {
			return nil, err
		}
	}
	var err error
	if m.limits, err = o.Limits.withDefaults(); err != nil {
		return nil, err
	}
	if m.errMode != IgnoreErrors && m.errMode != RaiseErrors {
		return nil, fmt.Errorf("memory: InjectionErrors must be %q or %q", IgnoreErrors, RaiseErrors)
	}
	if o.WriteMetadata != nil && o.WriteMetadataFunc != nil {
		return nil, errors.New("memory: set WriteMetadata or WriteMetadataFunc, not both")
	}
	if err := checkMetadata(o.WriteMetadata); err != nil {
		return nil, err
	}
	if len(o.WriteMetadata) > 0 {
		m.meta = maps.Clone(o.WriteMetadata)
	}
	if o.ToolPrefix != "" && !validToolPrefix(o.ToolPrefix) {
		return nil, errors.New("memory: ToolPrefix must be 1-32 characters of [A-Za-z0-9_-] starting with a letter")
	}
	m.names = newToolNames(o.ToolPrefix)
	if !o.SearchMode.Valid() {
		return nil, fmt.Errorf("memory: SearchMode %q: %w", o.SearchMode, store.ErrInvalidSearchMode)
	}
	m.mode = o.SearchMode
	if o.SearchRecencyHalfLife < 0 {
		return nil, fmt.Errorf("memory: SearchRecencyHalfLife must not be negative (0 turns recency off), got %s: %w", o.SearchRecencyHalfLife, store.ErrInvalidBound)
	}
	m.recency = o.SearchRecencyHalfLife
	if o.Guidance == nil {
		m.guidance = defaultGuidance(m.names)
	} else {
		m.guidance = *o.Guidance
	}
	if m.guidance != "" {
		m.instr = m.newView("", nil, m.guidance, false, false).fit(m.limits.MaxTokens * CharsPerToken)
	}
	return m, nil
}

func (l Limits) withDefaults() (Limits, error) {
	fields := []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxTokens", &l.MaxTokens, DefaultMaxTokens},
		{"MaxMemorySize", &l.MaxMemorySize, DefaultMaxMemorySize},
		{"MaxSearchResults", &l.MaxSearchResults, DefaultMaxSearchResults},
		{"MaxSearchResultChars", &l.MaxSearchResultChars, DefaultMaxSearchResultChars},
		{"MaxSearchFiles", &l.MaxSearchFiles, DefaultMaxSearchFiles},
	}
	for _, f := range fields {
		switch {
		case *f.v < 0:
			return l, fmt.Errorf("memory: %s must be a positive integer, got %d", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	switch {
	case l.MaxLines == NoLines:
		l.MaxLines = 0
	case l.MaxLines < 0:
		return l, fmt.Errorf("memory: MaxLines must be a non-negative integer or NoLines, got %d", l.MaxLines)
	case l.MaxLines == 0:
		l.MaxLines = DefaultMaxLines
	}
	return l, nil
}

// checkMetadata applies the store's metadata rules up front, so a bad fixed
// map fails at construction rather than on the model's first write.
func checkMetadata(m map[string]string) error {
	if err := store.ValidateMetadata(m); err != nil {
		return fmt.Errorf("memory: WriteMetadata: %w", err)
	}
	return nil
}

func validToolPrefix(p string) bool {
	if len(p) > 32 || !(p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validateNamespace checks a namespace: "/"-separated segments of
// [A-Za-z0-9_.-], none "." or containing "..". The error wraps
// store.ErrInvalidPath and does not repeat the namespace.
func validateNamespace(ns string) error {
	bad := store.ValidatePath(ns) != nil
	for seg := range strings.SplitSeq(ns, "/") {
		bad = bad || seg == "."
	}
	if bad {
		return fmt.Errorf("memory: invalid namespace: %w", store.ErrInvalidPath)
	}
	return nil
}

// ID is a stable identifier of this notebook for frameworks that name
// toolsets or durable steps: "memory" for the agent name "main", else
// "memory-<agent name>".
func (m *Memory) ID() string {
	if m.agent == DefaultAgentName {
		return "memory"
	}
	return "memory-" + m.agent
}

// Store returns the store the notebook runs on.
func (m *Memory) Store() *store.Store { return m.s }

// Heading returns the configured heading ("" if none).
func (m *Memory) Heading() string { return m.heading }

// Limits returns the notebook's limits, defaults filled in.
func (m *Memory) Limits() Limits { return m.limits }

// ErrorMode returns what the notebook does with a failure it cannot hand
// to the model ([Options.InjectionErrors], default [IgnoreErrors]); the
// background jobs that feed it (package pruned) follow it too.
func (m *Memory) ErrorMode() ErrorMode { return m.errMode }

// Invocation identifies the caller of one tool call or snapshot.
type Invocation struct {
	// Namespace is the namespace the application resolved for this call,
	// such as the framework's user id. It applies only when the Memory has
	// no namespace of its own (Options.Namespace and NamespaceFunc unset);
	// "" then means no namespace (files at <agent name>/<file>).
	Namespace string
	// RunID identifies the run (agent invocation) the call belongs to. It
	// must be stable across replays of that run; write and delete need it.
	RunID string
	// ToolCallID is the model's tool-call id, stable across replays; write
	// and delete need it.
	ToolCallID string
	// Metadata is recorded with this call's write or delete, over the
	// notebook's own ([Options.WriteMetadata] or WriteMetadataFunc): a key
	// in both takes this value. Set who made the call, such as
	// [UpdatedByKey] (the authenticated user) and [ClientKey] (the client
	// program). The store's metadata rules apply to the merged map: one
	// they refuse fails the call with store.ErrInvalidMetadata and writes
	// nothing. A replay stores nothing, so it keeps the original's.
	Metadata map[string]string
	// Scope, when [Memory.Resolve] of this Memory returned it, is the
	// call's resolved scope: the call uses it and neither resolves
	// Namespace again nor asks Options.NamespaceFunc. The zero Scope, or
	// one another Memory resolved, is ignored.
	Scope Scope
}

// Metadata keys the notebook's callers set to record who made a change
// ([Invocation.Metadata], [Options.WriteMetadata]); `agentmem log` shows
// them.
const (
	// UpdatedByKey names the user (or job) that made the change, such as
	// the authenticated user of an MCP request: the store's key, which it
	// sets on its own deletes too.
	UpdatedByKey = store.UpdatedByKey
	// ClientKey names the client program that made the change, such as the
	// MCP client's name from its initialize request.
	ClientKey = "client"
)

// scope is a resolved notebook location.
type scope struct {
	path string // <namespace>/<agent> or <agent>
}

// hash is the first 16 hex characters of the SHA-256 of the path, which
// telemetry records instead of the path.
func (sc scope) hash() string {
	sum := sha256.Sum256([]byte(sc.path))
	return hex.EncodeToString(sum[:8])
}

func (sc scope) file(name string) string { return sc.path + "/" + name }

// Scope is the notebook of one call, resolved once by [Memory.Resolve]:
// the namespace validated and joined with the agent name. Pass it in
// [Invocation.Scope] so that the call does not resolve it again.
type Scope struct {
	m  *Memory // the Memory that resolved it
	sc scope
}

// Path returns the scope path (<namespace>/<agent name>, or the agent
// name without a namespace) under which the notebook's files live; ""
// for the zero Scope.
func (s Scope) Path() string { return s.sc.path }

// Resolve resolves the scope of a call once (Options.Namespace or
// NamespaceFunc, else inv.Namespace), for the calls that follow it
// ([Invocation.Scope], [Memory.SnapshotOf]). Its errors are those of
// the namespace resolver and store.ErrInvalidPath; a nil m is
// store.ErrNilArgument.
func (m *Memory) Resolve(ctx context.Context, inv Invocation) (Scope, error) {
	if m == nil {
		return Scope{}, fmt.Errorf("memory: call Resolve on a Memory from memory.New, not nil: %w", store.ErrNilArgument)
	}
	if inv.Scope.m == m {
		return inv.Scope, nil
	}
	sc, err := m.resolve(ctx, inv.Namespace)
	if err != nil {
		return Scope{}, err
	}
	return Scope{m: m, sc: sc}, nil
}

// Scope returns the resolved scope path (<namespace>/<agent name>) for a
// call, under which the notebook's files live: [Memory.Resolve]'s Path.
// Its errors are those of the namespace resolver and store.ErrInvalidPath.
func (m *Memory) Scope(ctx context.Context, inv Invocation) (string, error) {
	sc, err := m.Resolve(ctx, inv)
	return sc.Path(), err
}

// scopeOf is the scope of a call: inv.Scope when this Memory resolved it,
// else inv.Namespace resolved.
func (m *Memory) scopeOf(ctx context.Context, inv Invocation) (scope, error) {
	if inv.Scope.m == m {
		return inv.Scope.sc, nil
	}
	return m.resolve(ctx, inv.Namespace)
}

func (m *Memory) resolve(ctx context.Context, fallback string) (scope, error) {
	ns := m.ns
	switch {
	case m.nsFunc != nil:
		var err error
		if ns, err = m.nsFunc(ctx); err != nil {
			return scope{}, err
		}
	case ns == "":
		ns = fallback
	}
	p := m.agent
	if ns != "" {
		if err := validateNamespace(ns); err != nil {
			return scope{}, err
		}
		p = ns + "/" + m.agent
	}
	if err := store.ValidatePath(p); err != nil {
		return scope{}, fmt.Errorf("memory: invalid scope: %w", store.ErrInvalidPath)
	}
	return scope{path: p}, nil
}
