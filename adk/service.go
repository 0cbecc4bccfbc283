package adk

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	adkmemory "google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// Defaults of [ServiceOptions].
const (
	DefaultSessionsFolder = "adk-sessions"
	DefaultMaxResults     = 10
	DefaultMaxSearchFiles = 1000
	DefaultMaxEventChars  = 16384
)

// Errors of the [MemoryService].
var (
	// errNoUser is [memory.ErrNoUser] with how to give the id in ADK: a
	// session or search request without a user id returns it.
	errNoUser = fmt.Errorf("%w: give the session one (runner.Run's userID)", memory.ErrNoUser)
	// ErrNilStore reports a nil store given to [NewMemoryService]. It
	// wraps store.ErrNilArgument.
	ErrNilStore = fmt.Errorf("adk: pass a store (store.New or store.Open) to NewMemoryService, not nil: %w", store.ErrNilArgument)
	// ErrNoApp reports a session or search request without an app name.
	ErrNoApp = errors.New("adk: give the runner an app name (runner.Config.AppName): memory is scoped per app")
)

// The metadata keys stored with each event file.
const (
	metaAuthor  = "adk.author"
	metaRole    = "adk.role"
	metaTime    = "adk.timestamp"
	metaEvent   = "adk.event_id"
	metaSession = "adk.session_id"
)

// ServiceOptions configures a [MemoryService]. Nil means defaults.
type ServiceOptions struct {
	// Folder is the folder, under each user's namespace, that holds the
	// stored sessions: one subfolder per app, <user>/<Folder>/<app>/.
	// It must be one path segment. Default "adk-sessions".
	Folder string
	// MaxResults bounds the entries of one search. Default 10.
	MaxResults int
	// MaxSearchFiles bounds the event files one search scans (the newest
	// are not preferred: the store scans in path order). Default 1,000.
	MaxSearchFiles int
	// MaxEventChars bounds the text stored per event, in characters;
	// longer text is cut. Default 16,384.
	MaxEventChars int
}

// MemoryService is ADK's long-term memory interface (memory.Service, used
// by ADK's load_memory and preload_memory tools through
// runner.Config.MemoryService) over an agentmem store. It is safe for
// concurrent use.
//
// AddSessionToMemory stores each event of the session that carries text
// as one Markdown file a person can read,
//
//	<user>/adk-sessions/<app>/<session>__<event>.md
//
// (user, app, session and event ids escaped by [memory.EscapeNamespace])
// with the author, role, timestamp and ids as the file's metadata. ADK adds
// a session again and again during its lifetime: events already stored are
// skipped by one listing of the session's files, and each new event is
// created with an operation id derived from its event id, so an event is
// stored exactly once however often, and however concurrently, it is
// re-added (within the store's receipt retention, a file a person deleted
// is not brought back by a re-add either). Function calls and responses
// and thoughts are not stored (ADK's in-memory service does the same).
//
// SearchMemory runs the store's bounded lexical search over the user's
// files of the app only, and returns one ADK memory entry per matching
// event, best first, with its text, author, timestamp and event id.
type MemoryService struct {
	s    *store.Store
	opts ServiceOptions
}

var _ adkmemory.Service = (*MemoryService)(nil)

// NewMemoryService returns a memory service over s. It fails when s is nil
// or an option is invalid (a negative bound, a Folder that is not one path
// segment).
func NewMemoryService(s *store.Store, opts *ServiceOptions) (*MemoryService, error) {
	if s == nil {
		return nil, ErrNilStore
	}
	var o ServiceOptions
	if opts != nil {
		o = *opts
	}
	if o.Folder == "" {
		o.Folder = DefaultSessionsFolder
	}
	if err := store.ValidatePath(o.Folder); err != nil || strings.Contains(o.Folder, "/") {
		return nil, fmt.Errorf("adk: ServiceOptions.Folder must be one path segment of [A-Za-z0-9_.-]: %w", store.ErrInvalidPath)
	}
	for _, b := range []struct {
		name string
		v    *int
		def  int
	}{{"MaxResults", &o.MaxResults, DefaultMaxResults}, {"MaxSearchFiles", &o.MaxSearchFiles, DefaultMaxSearchFiles},
		{"MaxEventChars", &o.MaxEventChars, DefaultMaxEventChars}} {
		switch {
		case *b.v < 0:
			return nil, fmt.Errorf("adk: ServiceOptions.%s must be positive, got %d", b.name, *b.v)
		case *b.v == 0:
			*b.v = b.def
		}
	}
	return &MemoryService{s: s, opts: o}, nil
}

// folder returns <user>/<Folder>/<app>/ for a user and app.
func (m *MemoryService) folder(user, app string) (string, error) {
	if user == "" {
		return "", errNoUser
	}
	if app == "" {
		return "", ErrNoApp
	}
	return memory.EscapeNamespace(user) + "/" + m.opts.Folder + "/" + memory.EscapeNamespace(app) + "/", nil
}

// AddSessionToMemory stores the session's events that carry text, each
// exactly once (see [MemoryService]). Errors: [memory.ErrNoUser], [ErrNoApp], or
// the store's (store.ErrInvalidMetadata for ids too long to record, a
// backend failure); events stored before a failure stay stored, and adding
// the session again completes it.
func (m *MemoryService) AddSessionToMemory(ctx context.Context, sess session.Session) error {
	if sess == nil {
		return fmt.Errorf("adk: pass a session to AddSessionToMemory, not nil: %w", store.ErrNilArgument)
	}
	dir, err := m.folder(sess.UserID(), sess.AppName())
	if err != nil {
		return err
	}
	prefix := dir + idSegment(sess.ID()) + "__"
	have := map[string]bool{}
	for p, err := range m.s.Walk(ctx, prefix, 1000) {
		if err != nil {
			return fmt.Errorf("adk: list stored events: %w", err)
		}
		have[p] = true
	}
	for ev := range sess.Events().All() {
		if ev == nil || ev.Partial {
			continue
		}
		text := eventText(ev.Content, m.opts.MaxEventChars)
		if text == "" {
			continue
		}
		id := ev.ID
		if id == "" { // not from a session service; derive a stable id
			id = "h" + digest(ev.InvocationID, ev.Author, ev.Timestamp.UTC().Format(time.RFC3339Nano), text)[:32]
		}
		path := prefix + idSegment(id) + ".md"
		if have[path] {
			continue
		}
		role := string(ev.Content.Role)
		ts := ev.Timestamp.UTC()
		content := fmt.Sprintf("### %s · %s\n\n%s\n", cmp.Or(ev.Author, role), ts.Format(time.RFC3339), text)
		meta := map[string]string{metaAuthor: ev.Author, metaRole: role, metaEvent: id, metaSession: sess.ID()}
		if !ts.IsZero() {
			meta[metaTime] = ts.Format(time.RFC3339Nano)
		}
		for k, v := range meta {
			if v == "" {
				delete(meta, k)
			}
		}
		op := &store.Operation{ID: "adk-memory:" + digest(path), Fingerprint: digest(content)}
		_, err := m.s.Write(ctx, store.WriteRequest{Path: path, Content: content, Operation: op, Metadata: meta})
		switch {
		case err == nil, errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrOperationConflict):
			// Stored now, or already (by a concurrent add, or rendered
			// differently by an earlier add of the same event).
		default:
			return fmt.Errorf("adk: store session event: %w", err)
		}
	}
	return nil
}

// SearchMemory returns the user's stored events of the app that match the
// query, best first (see [MemoryService]). The query is cut to its first
// 1,000 characters and 32 distinct terms, as the notebook's search_memory
// does. A request without matches returns an empty Memories slice.
// Errors: [memory.ErrNoUser], [ErrNoApp], or the store's.
func (m *MemoryService) SearchMemory(ctx context.Context, req *adkmemory.SearchRequest) (*adkmemory.SearchResponse, error) {
	if req == nil {
		return nil, errors.New("adk: pass a search request to SearchMemory (it was nil)")
	}
	dir, err := m.folder(req.UserID, req.AppName)
	if err != nil {
		return nil, err
	}
	out := &adkmemory.SearchResponse{Memories: []adkmemory.Entry{}}
	q := boundQuery(req.Query)
	if q == "" {
		return out, nil
	}
	fileChars := m.opts.MaxEventChars + 1024 // the heading line
	res, err := m.s.Search(ctx, search.Request{
		Prefix: dir, Query: q, Limit: m.opts.MaxResults, MaxFiles: m.opts.MaxSearchFiles,
		MaxChars: m.opts.MaxResults * (store.MaxSegmentChars + 1024), MaxFileChars: fileChars,
	})
	if err != nil {
		return nil, fmt.Errorf("adk: search memory: %w", err)
	}
	for _, match := range res.Matches {
		f, err := m.s.Read(ctx, match.Path, fileChars)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since the search
		}
		if err != nil {
			return nil, fmt.Errorf("adk: read memory entry: %w", err)
		}
		out.Memories = append(out.Memories, entryOf(f))
	}
	return out, nil
}

// entryOf turns a stored event file back into an ADK memory entry. A file
// edited by hand (its metadata gone) still yields its text.
func entryOf(f *store.File) adkmemory.Entry {
	text := f.Content
	if strings.HasPrefix(text, "### ") {
		if _, body, ok := strings.Cut(text, "\n\n"); ok {
			text = body
		}
	}
	text = strings.TrimRight(text, "\n")
	role := genai.Role(f.Metadata[metaRole])
	if role == "" {
		role = genai.RoleUser
	}
	e := adkmemory.Entry{
		ID:      f.Metadata[metaEvent],
		Content: genai.NewContentFromText(text, role),
		Author:  f.Metadata[metaAuthor],
	}
	if ts, err := time.Parse(time.RFC3339Nano, f.Metadata[metaTime]); err == nil {
		e.Timestamp = ts
	}
	return e
}

// eventText returns the text parts of c (thoughts and injected memory
// blocks left out) joined by newlines, cut to max characters.
func eventText(c *genai.Content, max int) string {
	if c == nil {
		return ""
	}
	var texts []string
	for _, p := range c.Parts {
		if p == nil || p.Thought || strings.TrimSpace(p.Text) == "" || strings.HasPrefix(p.Text, memory.BlockOpen) {
			continue
		}
		texts = append(texts, strings.TrimSpace(p.Text))
	}
	return cutRunes(strings.Join(texts, "\n"), max)
}

// cutRunes returns the first max characters of s.
func cutRunes(s string, max int) string {
	s, _ = driver.CutRunes(s, max)
	return s
}

// boundQuery keeps the first 1,000 characters and 32 distinct terms.
func boundQuery(q string) string {
	seen := map[string]bool{}
	var terms []string
	for _, t := range search.Fields(cutRunes(q, 1000)) {
		if lt := strings.ToLower(t); !seen[lt] && len(terms) < 32 {
			seen[lt] = true
			terms = append(terms, t)
		}
	}
	return strings.Join(terms, " ")
}

// idSegment escapes an ADK id for a file name; an id longer than 90
// characters once escaped becomes "_h" and 40 hex digits of its SHA-256,
// so that "<session>__<event>.md" stays within one path segment. Escaped
// ids never contain "__", which makes the separator unambiguous.
func idSegment(id string) string {
	if e := memory.EscapeNamespace(id); e != "" && len(e) <= 90 {
		return e
	}
	return "_h" + digest(id)[:40]
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
