package mcp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

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
	polling  *background.Group       // the pollers' goroutines, stopped by Shutdown
	calls    inflight                // HTTP requests in flight, for Shutdown
	handling inflight                // sessions' requests in flight, for Shutdown
	replies  inflight                // requests read by Run and Connect sessions, not yet answered
}

// NewServer returns an MCP server for mem: the four notebook tools with
// the notebook's own JSON Schemas, the notebook's guidance as the server
// instructions, the caller's files and the injected block as resources
// (with subscriptions), and the prompt [PromptName]. mem must resolve the
// namespace from the invocation (no memory.Options.Namespace or
// NamespaceFunc): the server gives it the caller's. It fails with
// [ErrNilMemory] when mem is nil.
func NewServer(mem *memory.Memory, opts *Options) (*Server, error) {
	if mem == nil {
		return nil, ErrNilMemory
	}
	s := &Server{mem: mem, subs: map[subscription]uint64{}, pollers: map[string]*poller{}, polling: background.New()}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Namespace == nil {
		s.opts.Namespace = AuthenticatedUser
	}
	if s.opts.MaxResources < 0 {
		return nil, fmt.Errorf("mcp: MaxResources must be positive, got %d", s.opts.MaxResources)
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
			InputSchema: inputSchema(spec),
			Annotations: annotations(spec.Name, specs),
		}, s.callTool(spec.Name, specs))
	}
	s.sdk.AddResource(&mcpsdk.Resource{
		URI: SnapshotURI, Name: "memory-snapshot", Title: "Memory block",
		Description: "The <memory> block injected beside the user's prompts: the end of MEMORY.md and the list of other memory files.",
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

// MCP returns the underlying SDK server, for adding features of your own.
// Serve it through [Server.Run], [Server.Connect] or [Server.Handler]:
// they key each tool call by its JSON-RPC request id (see the package doc).
func (s *Server) MCP() *mcpsdk.Server { return s.sdk }

// Run serves one session over t (such as &mcpsdk.StdioTransport{}) until
// the client disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcpsdk.Transport) error {
	return s.sdk.Run(ctx, s.withRequestIDs(t))
}

// Connect starts a session over t and returns it without waiting (for
// in-memory transports in tests and for custom transports).
func (s *Server) Connect(ctx context.Context, t mcpsdk.Transport, opts *mcpsdk.ServerSessionOptions) (*mcpsdk.ServerSession, error) {
	return s.sdk.Connect(ctx, s.withRequestIDs(t), opts)
}

// caller is the resolved notebook of one request.
type caller struct {
	user  string       // the user id, as Options.Namespace answered it
	sc    memory.Scope // resolved once; Path is <ns>/<agent name>
	scope string       // hash of the scope path, tags notifications
}

// inv is the invocation of c's notebook, its scope resolved.
func (c caller) inv() memory.Invocation { return memory.Invocation{Scope: c.sc} }

// resolve returns the caller of a request: its namespace is resolved here
// once, and the notebook's calls reuse it (caller.inv).
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
	sc, err := s.mem.Resolve(ctx, memory.Invocation{Namespace: ns})
	if err != nil {
		return caller{}, err
	}
	// The memory must use the namespace given: one of its own would put
	// every caller in one notebook.
	path := sc.Path()
	rest, ok := strings.CutPrefix(path, ns+"/")
	if !ok || strings.Contains(rest, "/") {
		return caller{}, ErrOwnNamespace
	}
	sum := sha256.Sum256([]byte(path))
	return caller{user: id, sc: sc, scope: hex.EncodeToString(sum[:16])}, nil
}

// ErrNilMemory reports a nil notebook given to [NewServer]. It wraps
// store.ErrNilArgument.
var ErrNilMemory = fmt.Errorf("mcp: pass a notebook (memory.New) to NewServer, not nil: %w", store.ErrNilArgument)

// ErrOwnNamespace reports a memory built with a namespace of its own
// (memory.Options.Namespace or NamespaceFunc): it would put every caller
// in one notebook, so the server refuses to serve it.
var ErrOwnNamespace = errors.New("mcp: the memory has a namespace of its own; build it without Options.Namespace and NamespaceFunc")

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

// inputSchema is spec's schema as MCP advertises it. core/memory writes
// it for OpenAI strict mode, which lists every property in required and
// types an optional one ["string", "null"]; an MCP client reads required
// as "must send" (the MCP Inspector then sends file=null). So an optional
// property is left out of required here; memory.Call takes its absence,
// like a null, as no value.
func inputSchema(spec memory.ToolSpec) map[string]any {
	schema := maps.Clone(spec.InputSchema)
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	keep := []any{}
	for _, name := range required {
		p, _ := props[fmt.Sprint(name)].(map[string]any)
		if types, ok := p["type"].([]any); ok && slices.Contains(types, any("null")) {
			continue
		}
		keep = append(keep, name)
	}
	schema["required"] = keep
	return schema
}
