package mcp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
)

// URIs of the resources the server offers, all of one form: "memory:///"
// and a name. A file's URI is FileURIPrefix plus its name
// ("memory:///MEMORY.md"); the injected block is SnapshotURI, a name no
// file has (files end in ".md"). They are relative to the caller's
// namespace, so two users reading the same URI read their own files.
const (
	SnapshotURI   = "memory:///snapshot"
	FileURIPrefix = "memory:///"
	// DeprecatedSnapshotURI is the snapshot's URI before this form: it
	// still answers resources/read and resources/subscribe, and is not
	// listed. It goes in the next release; use SnapshotURI.
	DeprecatedSnapshotURI = "memory://snapshot"
	// FileURITemplate is the RFC 6570 template of the file resources.
	FileURITemplate = FileURIPrefix + "{file}"
)

// PromptName is the name of the prompt that returns the injected block.
const PromptName = "memory"

// DefaultMaxResources bounds the files resources/list returns.
const DefaultMaxResources = 1000

// Options configures a [Server]. Nil means defaults.
type Options struct {
	// Namespace returns the user id of the caller of one request; the
	// notebook lives under memory.EscapeNamespace(id). It is never taken
	// from a tool argument. Default [AuthenticatedUser] (the user id of the
	// bearer token, for HTTP); use [FixedUser] for a stdio server that
	// serves one user. An error fails the request (a JSON-RPC error, not a
	// tool result); an empty id is refused.
	Namespace func(ctx context.Context, req mcpsdk.Request) (string, error)
	// Name and Version identify the server to clients. Defaults "agentmem"
	// and "v0".
	Name, Version string
	// MaxResources bounds the files resources/list returns. Default
	// [DefaultMaxResources].
	MaxResources int
	// PollInterval is how often the server checks the resources someone
	// subscribed to for changes made by other processes (another server
	// on the same store, `agentmem write`, a background job): per user
	// with subscriptions, each poll reads each subscribed file's version
	// (one read per file) and, when the snapshot is subscribed, builds the
	// snapshot once. Polling of a user stops when none of its sessions is
	// subscribed any more. Default [DefaultPollInterval]; negative turns
	// polling off (only changes made through this server notify).
	PollInterval time.Duration
	// OnError, when set, receives every Go error of a request with its full
	// detail (for logging); clients only see a redacted message.
	OnError func(ctx context.Context, err error)
	// Logger receives the SDK's logs; nil means none.
	Logger *slog.Logger
	// Observe, when set, is called as each MCP message arrives (requests
	// and notifications, before authentication of the user by
	// [Options.Namespace]), with what identifies it ([RequestInfo]); the
	// context it returns is the one the request is served in (so that the
	// notebook's and the backend's spans become children of a span it
	// starts), and end is called once with the outcome: nil, [ErrToolResult]
	// for a tool call whose result is an error, or the error answered
	// (a JSON-RPC error has an ErrorType method giving its code). It must
	// be safe for concurrent use. otel.MCPObserver (module
	// github.com/agentmem/agentmem/otel) makes OpenTelemetry spans.
	Observe func(ctx context.Context, r RequestInfo) (_ context.Context, end func(err error))
}

// FixedUser returns a Namespace function that always answers id: a stdio
// server runs as one user.
func FixedUser(id string) func(context.Context, mcpsdk.Request) (string, error) {
	return func(context.Context, mcpsdk.Request) (string, error) { return id, nil }
}

// ErrNoUser reports a request whose user could not be resolved (no
// authenticated user, or an empty id), wrapped with how to give one.
//
// Deprecated: use memory.ErrNoUser.
var ErrNoUser = memory.ErrNoUser

// errNoUser is [memory.ErrNoUser] with how to give the user over MCP.
var errNoUser = fmt.Errorf("%w: authenticate, or set Options.Namespace", memory.ErrNoUser)

// AuthenticatedUser is the default Namespace function: the UserID of the
// bearer token the HTTP transport verified (auth.TokenInfo). It fails with
// [memory.ErrNoUser] when there is none.
func AuthenticatedUser(_ context.Context, req mcpsdk.Request) (string, error) {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return extra.TokenInfo.UserID, nil
	}
	return "", errNoUser
}

// Server serves one notebook ([memory.Memory]) over MCP. It is safe for
// concurrent use.
type Server struct {
	mem      *memory.Memory
	sdk      *mcpsdk.Server
	opts     Options
	readTool string

	mu       sync.Mutex
	subs     map[subscription]uint64 // → the subGen it was made at
	subGen   uint64                  // subscriptions made so far
	pollers  map[string]*poller      // by scope
	calls    inflight                // HTTP requests in flight, for Shutdown
	handling inflight                // sessions' requests in flight, for Shutdown
	replies  inflight                // requests read by Run and Connect sessions, not yet answered
}

// subscription is one session's subscription to one URI of one scope.
type subscription struct {
	session *mcpsdk.ServerSession
	scope   string // hash of the scope path
	uri     string
}

// metaScope tags a resources/updated notification with the hash of the
// scope it is about; the sending middleware delivers it only to sessions
// subscribed under that scope, and strips the tag.
const metaScope = "agentmem/scope"

// NewServer returns an MCP server for mem: the four notebook tools with
// the notebook's own JSON Schemas, the notebook's guidance as the server
// instructions, the caller's files and the injected block as resources
// (with subscriptions), and the prompt [PromptName]. mem must resolve the
// namespace from the invocation (no memory.Options.Namespace or
// NamespaceFunc): the server gives it the caller's. It fails when mem is nil.
func NewServer(mem *memory.Memory, opts *Options) (*Server, error) {
	if mem == nil {
		return nil, errors.New("agentmem/mcp: nil memory")
	}
	s := &Server{mem: mem, subs: map[subscription]uint64{}, pollers: map[string]*poller{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Namespace == nil {
		s.opts.Namespace = AuthenticatedUser
	}
	if s.opts.MaxResources < 0 {
		return nil, fmt.Errorf("agentmem/mcp: MaxResources must be positive, got %d", s.opts.MaxResources)
	}
	if s.opts.MaxResources == 0 {
		s.opts.MaxResources = DefaultMaxResources
	}
	if s.opts.PollInterval == 0 {
		s.opts.PollInterval = DefaultPollInterval
	}
	impl := &mcpsdk.Implementation{Name: cmp.Or(s.opts.Name, "agentmem"), Version: cmp.Or(s.opts.Version, "v0")}
	s.sdk = mcpsdk.NewServer(impl, &mcpsdk.ServerOptions{
		Instructions:       mem.Instructions(),
		Logger:             s.opts.Logger,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		// Static tools and prompts; the resource list is per user, so no
		// list_changed notifications (they would go to every session).
		Capabilities: &mcpsdk.ServerCapabilities{
			Tools:     &mcpsdk.ToolCapabilities{},
			Prompts:   &mcpsdk.PromptCapabilities{},
			Resources: &mcpsdk.ResourceCapabilities{Subscribe: true},
		},
	})
	specs := mem.Tools()
	s.readTool = specs[1].Name
	for _, spec := range specs {
		s.sdk.AddTool(&mcpsdk.Tool{
			Name:        spec.Name,
			Description: spec.Description,
			InputSchema: spec.InputSchema,
			Annotations: annotations(spec.Name, specs),
		}, s.callTool(spec.Name, specs))
	}
	s.sdk.AddResource(&mcpsdk.Resource{
		URI: SnapshotURI, Name: "memory-snapshot", Title: "Memory block",
		Description: "The <memory> block injected beside the user's prompts: the end of MEMORY.md and the list of other memory files.",
		MIMEType:    "text/markdown",
	}, s.readSnapshot)
	s.sdk.AddResource(&mcpsdk.Resource{
		URI: DeprecatedSnapshotURI, Name: "memory-snapshot-deprecated", Title: "Memory block (deprecated URI)",
		Description: "The memory block under its former URI; read " + SnapshotURI + " instead.",
		MIMEType:    "text/markdown",
	}, s.readSnapshot)
	s.sdk.AddResourceTemplate(&mcpsdk.ResourceTemplate{
		URITemplate: FileURITemplate, Name: "memory-file", Title: "Memory file",
		Description: "One memory file of the current user, such as " + FileURIPrefix + memory.MainFile + ".",
		MIMEType:    "text/markdown",
	}, s.readFile)
	s.sdk.AddPrompt(&mcpsdk.Prompt{
		Name: PromptName, Title: "Memory",
		Description: "The current user's memory block (the end of MEMORY.md and the list of other memory files).",
	}, s.prompt)
	s.sdk.AddReceivingMiddleware(s.listResources)
	if s.opts.Observe != nil {
		s.sdk.AddReceivingMiddleware(s.observe)
	}
	s.sdk.AddReceivingMiddleware(s.drain) // outermost
	s.sdk.AddSendingMiddleware(s.filterUpdates)
	return s, nil
}

// annotations returns the hints of one tool. read_memory and search_memory
// only read. delete_memory is destructive and idempotent (a second delete
// finds nothing). write_memory is destructive too: with old_text it
// replaces or removes a passage, which is more than an additive update in
// the MCP sense; and it is not idempotent (each append appends).
func annotations(name string, specs []memory.ToolSpec) *mcpsdk.ToolAnnotations {
	no, yes := false, true
	a := &mcpsdk.ToolAnnotations{OpenWorldHint: &no}
	switch name {
	case specs[0].Name: // write
		a.Title, a.DestructiveHint = "Write memory", &yes
	case specs[1].Name: // read
		a.Title, a.ReadOnlyHint = "Read memory", true
	case specs[2].Name: // delete
		a.Title, a.DestructiveHint, a.IdempotentHint = "Delete memory file", &yes, true
	default: // search
		a.Title, a.ReadOnlyHint = "Search memory", true
	}
	return a
}

// MCP returns the underlying SDK server, for adding features of your own.
// Serve it through [Server.Run], [Server.Connect] or [Server.Handler]:
// they key each tool call by its JSON-RPC request id (see the package doc).
func (s *Server) MCP() *mcpsdk.Server { return s.sdk }

// Run serves one session over t (such as &mcpsdk.StdioTransport{}) until
// the client disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcpsdk.Transport) error {
	return s.sdk.Run(ctx, withRequestIDs(t, s.opts.Observe != nil, &s.replies))
}

// Connect starts a session over t and returns it without waiting (for
// in-memory transports in tests and for custom transports).
func (s *Server) Connect(ctx context.Context, t mcpsdk.Transport, opts *mcpsdk.ServerSessionOptions) (*mcpsdk.ServerSession, error) {
	return s.sdk.Connect(ctx, withRequestIDs(t, s.opts.Observe != nil, &s.replies), opts)
}

// caller is the resolved notebook of one request.
type caller struct {
	user  string // the user id, as Options.Namespace answered it
	ns    string // escaped namespace, for memory.Invocation
	path  string // scope path, <ns>/<agent name>
	scope string // hash of path, tags notifications
}

// resolve returns the caller of a request.
func (s *Server) resolve(ctx context.Context, req mcpsdk.Request) (caller, error) {
	id, err := s.opts.Namespace(ctx, req)
	if err != nil && !errors.Is(err, memory.ErrNoUser) {
		err = fmt.Errorf("%w: %w", errNoUser, err)
	}
	if err != nil {
		return caller{}, err
	}
	if id == "" {
		return caller{}, errNoUser
	}
	ns := memory.EscapeNamespace(id)
	path, err := s.mem.Scope(ctx, memory.Invocation{Namespace: ns})
	if err != nil {
		return caller{}, err
	}
	// The memory must use the namespace given: one of its own would put
	// every caller in one notebook.
	rest, ok := strings.CutPrefix(path, ns+"/")
	if !ok || strings.Contains(rest, "/") {
		return caller{}, ErrOwnNamespace
	}
	sum := sha256.Sum256([]byte(path))
	return caller{user: id, ns: ns, path: path, scope: hex.EncodeToString(sum[:16])}, nil
}

// ErrOwnNamespace reports a memory built with a namespace of its own
// (memory.Options.Namespace or NamespaceFunc): it would put every caller
// in one notebook, so the server refuses to serve it.
var ErrOwnNamespace = errors.New("agentmem/mcp: the memory has a namespace of its own; build it without Options.Namespace and NamespaceFunc")

func (s *Server) report(ctx context.Context, err error) {
	if s.opts.OnError != nil {
		s.opts.OnError(ctx, err)
	}
}

// fail reports err and returns what a client may see of it.
func (s *Server) fail(ctx context.Context, err error) error {
	s.report(ctx, err)
	switch {
	case errors.Is(err, memory.ErrNoUser):
		return errNoUser
	case errors.Is(err, ErrOwnNamespace):
		return ErrOwnNamespace
	}
	return memory.Redact(err)
}

// callTool returns the handler of one notebook tool.
func (s *Server) callTool(name string, specs []memory.ToolSpec) mcpsdk.ToolHandler {
	mutates := name == specs[0].Name || name == specs[2].Name
	return func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		c, err := s.resolve(ctx, req)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		run, call, te := invocationIDs(req)
		if te != nil {
			return toolResult(te, true)
		}
		inv := memory.Invocation{Namespace: c.ns, RunID: run, ToolCallID: call}
		if mutates {
			inv.Metadata = who(c, req)
		}
		res, err := s.mem.Call(ctx, inv, name, req.Params.Arguments)
		if err != nil {
			return toolResult(&memory.ToolError{Message: s.fail(ctx, err).Error()}, true)
		}
		if mutates {
			s.changed(ctx, c.scope, res)
		}
		_, isErr := res.(*memory.ToolError)
		return toolResult(res, isErr)
	}
}

// MaxWhoChars bounds each of the user id and the client name a write
// records ([memory.UpdatedByKey], [memory.ClientKey]), in characters; a
// longer one is cut.
const MaxWhoChars = 256

// who is the metadata of a write or delete of c: the user that made it
// and, when the client named itself in its initialize request
// (clientInfo.name), the client; without control characters (the store
// refuses NUL) and each cut to MaxWhoChars.
func who(c caller, req *mcpsdk.CallToolRequest) map[string]string {
	md := map[string]string{memory.UpdatedByKey: clean(c.user)}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			if name := clean(p.ClientInfo.Name); name != "" {
				md[memory.ClientKey] = name
			}
		}
	}
	return md
}

// clean drops the control characters of s and cuts it to MaxWhoChars.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	n := 0
	for i := range s {
		if n == MaxWhoChars {
			return s[:i]
		}
		n++
	}
	return s
}

// toolResult encodes a notebook result as structured content (an object:
// read_memory's text becomes {"result": text}, as in the ADK adapter) and
// as the same JSON in a text content, for clients that ignore structured
// content.
func toolResult(res any, isErr bool) (*mcpsdk.CallToolResult, error) {
	if text, ok := res.(string); ok {
		res = map[string]string{"result": text}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &mcpsdk.CallToolResult{
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           isErr,
	}, nil
}

// changed notifies the subscribers of a file (and of the snapshot) that a
// tool call changed it. A replay changed nothing.
func (s *Server) changed(ctx context.Context, scope string, res any) {
	var file string
	switch r := res.(type) {
	case *memory.WriteResult:
		if r.Replayed {
			return
		}
		file = r.File
	case *memory.DeleteResult:
		if r.Replayed || r.Status != "deleted" {
			return
		}
		file = r.File
	default:
		return
	}
	for _, uri := range []string{FileURIPrefix + file, SnapshotURI, DeprecatedSnapshotURI} {
		if !s.subscribed(scope, uri) {
			continue
		}
		s.notified(scope, uri)
		s.notify(ctx, scope, uri)
	}
}

// subscribed reports whether any live session subscribed to uri under
// scope, and forgets the subscriptions of sessions that ended.
func (s *Server) subscribed(scope, uri string) bool {
	live, gen := s.liveSessions()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetEnded(live, gen)
	for sub := range s.subs {
		if sub.scope == scope && sub.uri == uri {
			return true
		}
	}
	return false
}

// afterListing, when set (by tests), runs between liveSessions' listing
// of the sessions and its caller taking s.mu.
var afterListing atomic.Pointer[func()]

// liveSessions lists the sessions connected now, and the number of
// subscriptions made before the listing: forgetEnded drops only those, so
// a session that connects and subscribes after the listing (it is not in
// it) keeps its subscription. The listing is taken without s.mu, which
// the SDK's handlers (subscribe) take.
func (s *Server) liveSessions() (map[*mcpsdk.ServerSession]bool, uint64) {
	s.mu.Lock()
	gen := s.subGen
	s.mu.Unlock()
	live := map[*mcpsdk.ServerSession]bool{}
	for ss := range s.sdk.Sessions() {
		live[ss] = true
	}
	if f := afterListing.Load(); f != nil {
		(*f)()
	}
	return live, gen
}

// forgetEnded drops the subscriptions made up to gen by sessions not in
// live (see liveSessions). s.mu must be held.
func (s *Server) forgetEnded(live map[*mcpsdk.ServerSession]bool, gen uint64) {
	for sub, made := range s.subs {
		if made <= gen && !live[sub.session] {
			delete(s.subs, sub)
		}
	}
}

// filterUpdates is sending middleware: a resources/updated notification
// this server tagged with a scope reaches only the sessions subscribed
// under that scope (the SDK's own bookkeeping knows URIs, which are the
// same for every user), without the tag.
func (s *Server) filterUpdates(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		p, ok := req.GetParams().(*mcpsdk.ResourceUpdatedNotificationParams)
		ss, isServer := req.GetSession().(*mcpsdk.ServerSession)
		if !ok || !isServer {
			return next(ctx, method, req)
		}
		scope, tagged := p.Meta[metaScope].(string)
		if !tagged {
			return next(ctx, method, req)
		}
		s.mu.Lock()
		_, want := s.subs[subscription{ss, scope, p.URI}]
		s.mu.Unlock()
		if !want {
			return nil, nil
		}
		meta := mcpsdk.Meta{}
		for k, v := range p.Meta {
			if k != metaScope {
				meta[k] = v
			}
		}
		if len(meta) == 0 {
			meta = nil
		}
		out := &mcpsdk.ServerRequest[*mcpsdk.ResourceUpdatedNotificationParams]{
			Session: ss, Params: &mcpsdk.ResourceUpdatedNotificationParams{URI: p.URI, Meta: meta},
		}
		return next(ctx, method, out)
	}
}

func (s *Server) subscribe(ctx context.Context, req *mcpsdk.SubscribeRequest) error {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return s.fail(ctx, err)
	}
	if !isSnapshot(req.Params.URI) {
		if _, ok := fileName(req.Params.URI); !ok {
			return mcpsdk.ResourceNotFoundError(req.Params.URI)
		}
	}
	s.mu.Lock()
	s.subGen++
	s.subs[subscription{req.Session, c.scope, req.Params.URI}] = s.subGen
	s.mu.Unlock()
	s.watch(ctx, c, req.Params.URI)
	return nil
}

func (s *Server) unsubscribe(ctx context.Context, req *mcpsdk.UnsubscribeRequest) error {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return s.fail(ctx, err)
	}
	s.mu.Lock()
	delete(s.subs, subscription{req.Session, c.scope, req.Params.URI})
	s.mu.Unlock()
	return nil
}

// fileNameRE is the notebook's file-name rule (see core/memory).
var fileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)

// fileName returns the notebook file a URI names: "memory:///<name>" with
// name a valid notebook file name ending in ".md". Anything else (another
// scheme or host, a query, escapes, slashes, "..") is no file.
func fileName(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, FileURIPrefix)
	if !ok {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "memory" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" || u.Path != "/"+rest {
		return "", false
	}
	if !fileNameRE.MatchString(rest) || strings.Contains(rest, "..") || !strings.HasSuffix(rest, ".md") {
		return "", false
	}
	return rest, true
}

// listResources answers resources/list with the caller's own files (and
// the snapshot): the SDK's list is one for all sessions.
func (s *Server) listResources(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		c, err := s.resolve(ctx, req)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		prefix := c.path + "/"
		paths, err := s.mem.Store().ListPaths(ctx, prefix, s.opts.MaxResources+1)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		res := &mcpsdk.ListResourcesResult{Resources: []*mcpsdk.Resource{{
			URI: SnapshotURI, Name: "memory-snapshot", Title: "Memory block", MIMEType: "text/markdown",
		}}}
		res.CacheScope = "private"
		for _, p := range paths[:min(len(paths), s.opts.MaxResources)] {
			name, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			if _, ok := fileName(FileURIPrefix + name); !ok {
				continue
			}
			res.Resources = append(res.Resources, &mcpsdk.Resource{
				URI: FileURIPrefix + name, Name: name, MIMEType: "text/markdown",
			})
		}
		return res, nil
	}
}

// readFile reads one of the caller's files, bounded as read_memory is.
func (s *Server) readFile(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	name, ok := fileName(req.Params.URI)
	if !ok {
		return nil, mcpsdk.ResourceNotFoundError(req.Params.URI)
	}
	args, _ := json.Marshal(map[string]string{"file": name})
	res, err := s.mem.Call(ctx, memory.Invocation{Namespace: c.ns}, s.readTool, args)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	text, ok := res.(string)
	if !ok {
		return nil, mcpsdk.ResourceNotFoundError(req.Params.URI)
	}
	return textResource(req.Params.URI, text), nil
}

func (s *Server) readSnapshot(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
	block, err := s.block(ctx, req)
	if err != nil {
		return nil, err
	}
	return textResource(req.Params.URI, block), nil
}

// isSnapshot reports whether uri names the snapshot (under either URI).
func isSnapshot(uri string) bool { return uri == SnapshotURI || uri == DeprecatedSnapshotURI }

func textResource(uri, text string) *mcpsdk.ReadResourceResult {
	res := &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}
	res.CacheScope = "private"
	return res
}

// block returns the caller's injected block; an empty notebook gives an
// empty block.
func (s *Server) block(ctx context.Context, req mcpsdk.Request) (string, error) {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return "", s.fail(ctx, err)
	}
	block, err := s.mem.Snapshot(ctx, c.ns)
	if err != nil {
		return "", s.fail(ctx, err)
	}
	if block == "" {
		block = memory.BlockOpen + memory.BlockClose
	}
	return block, nil
}

func (s *Server) prompt(ctx context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
	block, err := s.block(ctx, req)
	if err != nil {
		return nil, err
	}
	return &mcpsdk.GetPromptResult{
		Description: "The current user's memory.",
		Messages:    []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: block}}},
	}, nil
}
