package adk

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
)

// DefaultPrunedFile is the default [HistoryWindow].File.
const DefaultPrunedFile = pruned.DefaultFile

// ErrNoSession reports a model request that the history window had to cut
// without knowing the run's session: ADK shows toolsets no session, so the
// window learns it from the Toolset's plugin.
var ErrNoSession = errors.New("adk: add Toolset.Plugin() to runner.Config.PluginConfig.Plugins: the history window needs the session's event ids")

// HistoryWindow is the opt-in pruned-history window of a [Toolset]
// ([Options.HistoryWindow]). Before each model request with more than Max
// contents, the oldest contents are left out of the request (the session
// keeps them) and a background job ([pruned.AppendQueue]) appends them,
// oldest first, to the user's notebook file File, so the model still finds
// them in the injected file list, with read_memory and with search_memory.
// The window needs [Toolset.Plugin] on the runner (ADK shows toolsets no
// session); [Toolset.Close] flushes it on shutdown.
//
// Failed appends follow the notebook's memory.Options.InjectionErrors:
// logged at Warn in IgnoreErrors mode; in RaiseErrors mode also returned by
// the next model request, [Toolset.Flush] or [Toolset.Close]. Both modes
// hand them to OnError (default [Options.OnError]), and a content whose append failed is
// tried again by the next request that prunes it.
//
// The cut never separates a function response from its call: the kept
// contents start with a user content that holds no function response
// (more are left out if needed, so a request may carry fewer than Max),
// or, when no such content is in reach, with the first content that holds
// no function response. When even that is impossible the request is sent
// whole.
//
// The file never fills up: when an append would take it past the
// notebook's file limit (memory.Limits.MaxMemorySize, 65,536 characters by
// default), the window goes on in the next file of a series, File with
// "_0002", "_0003", … before its extension (pruned_0002.md, listed after
// pruned.md; see [pruned.SeriesPath]), so no append fails for size. MaxFiles
// and MaxAge set a retention for the old files, deleted through the store
// (recorded in its history, with updated_by "agentmem-retention").
//
// Each pruned content is appended exactly once: its operation id derives
// from the session event it came from (its event id), so a content pruned
// again by every later request, a replayed run, or a restarted process
// appends nothing more (the store's receipts answer; see its receipt
// retention). Contents that ADK made up rather than took from an event
// (another agent's reply rewritten as context) take the id of the previous
// event plus their offset.
//
// The fields are those of [pruned.WindowOptions], in contents: Max turns
// the window on; Op defaults to "adk-prune:", and OnError to
// [Options.OnError].
type HistoryWindow struct {
	// WindowOptions holds the window's bound, file, queue, retention and
	// consolidation; an item is one content of a model request.
	pruned.WindowOptions
}

// pruner is the history window of one Toolset: a pruned.Window and the
// sessions of the runs in flight.
type pruner struct {
	win   *pruned.Window
	onErr func(context.Context, error)

	mu   sync.Mutex
	runs map[string]session.Session // invocation id → its session, from the plugin
}

func newPruner(mem *memory.Memory, w HistoryWindow, onErr func(context.Context, error)) (*pruner, error) {
	o := w.WindowOptions
	o.Op = cmp.Or(o.Op, "adk-prune:")
	if o.OnError == nil {
		o.OnError = onErr
	}
	onErr = o.OnError
	win, err := pruned.NewWindow(mem, &o)
	if err != nil {
		return nil, fmt.Errorf("adk: HistoryWindow.Consolidate: %w", err)
	}
	return &pruner{win: win, onErr: onErr, runs: map[string]session.Session{}}, nil
}

// maxRuns bounds the sessions of runs in flight the plugin records; past
// it (runs that never ended) the record starts over.
const maxRuns = 10_000

// Plugin returns the ADK plugin that tells the history window the session
// of each run (ADK shows toolsets no session, and the window needs the
// session's event ids and timestamps). With [Options.HistoryWindow] set,
// add it to runner.Config.PluginConfig.Plugins of every runner that runs
// the agent; model requests the window has to cut fail with
// [ErrNoSession] otherwise. Without a history window it returns a plugin
// that does nothing.
func (t *Toolset) Plugin() *plugin.Plugin {
	cfg := plugin.Config{Name: "agentmem-" + t.Name()}
	if p := t.pruner; p != nil {
		cfg.BeforeRunCallback = func(ic agent.InvocationContext) (*genai.Content, error) {
			if s := ic.Session(); s != nil {
				p.mu.Lock()
				if len(p.runs) >= maxRuns {
					clear(p.runs)
				}
				p.runs[ic.InvocationID()] = s
				p.mu.Unlock()
			}
			return nil, nil
		}
		cfg.AfterRunCallback = func(ic agent.InvocationContext) {
			p.mu.Lock()
			delete(p.runs, ic.InvocationID())
			p.mu.Unlock()
		}
	}
	pl, _ := plugin.New(cfg) // plugin.New never fails (v2.2.0)
	return pl
}

// prune cuts the oldest contents beyond the window, queues them for the
// pruned-history file and returns the kept contents. With block set, the
// memory block is still to be added: when the kept contents hold no user
// text for it to join, it becomes a content of its own, so one content
// less is kept.
func (p *pruner) prune(ctx agent.Context, contents []*genai.Content, block bool) ([]*genai.Content, error) {
	if err := p.win.Err(); err != nil {
		return nil, fmt.Errorf("adk: pruned history: %w", err)
	}
	k := p.win.Cut(pruned.WindowItems{
		N: len(contents),
		Prefer: func(i int) bool {
			c := contents[i]
			return c != nil && c.Role == genai.RoleUser && !hasResponse(c)
		},
		Allow:    func(i int) bool { return contents[i] != nil && !hasResponse(contents[i]) },
		UserText: func(i int) bool { c := contents[i]; return c != nil && c.Role == genai.RoleUser && hasText(c) },
	}, block)
	if k == 0 {
		return contents, nil
	}
	p.mu.Lock()
	sess := p.runs[ctx.InvocationID()]
	p.mu.Unlock()
	if sess == nil {
		return nil, ErrNoSession
	}
	ns := memory.EscapeNamespace(ctx.UserID())
	path, err := p.win.Path(ctx, ns)
	if err != nil {
		if p.onErr != nil {
			p.onErr(ctx, err)
		}
		return nil, fmt.Errorf("adk: pruned history: %w", err)
	}
	items := make([]pruned.Item, 0, k)
	for i, src := range sourceEvents(sess, contents[:k], ctx.InvocationID()) {
		items = append(items, pruned.Item{Key: src.id, Text: renderContent(contents[i], src)})
	}
	if err := p.win.Add(ctx, ns, path, items); err != nil {
		return nil, err
	}
	return contents[k:], nil
}

// Flush waits until every pruned content queued so far is appended (or has
// failed), and returns the first failure not yet reported when the
// notebook's InjectionErrors mode is memory.RaiseErrors; with
// [HistoryWindow].Consolidate, it then waits for the consolidations due
// (their failures go to OnError, not here). It returns nil at once when
// the toolset has no history window.
func (t *Toolset) Flush(ctx context.Context) error {
	if t.pruner == nil {
		return nil
	}
	return t.pruner.win.Flush(ctx)
}

// Close flushes (see [Toolset.Flush]) and closes the history window: later
// model requests that would prune fail with pruned.ErrQueueClosed, and
// background consolidation stops after the runs already due. Call it
// when the application shuts down. Without a history window it does
// nothing.
func (t *Toolset) Close(ctx context.Context) error {
	if t.pruner == nil {
		return nil
	}
	return t.pruner.win.Close(ctx)
}

func hasResponse(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// source is the session event a request content came from.
type source struct {
	id     string
	author string
	time   time.Time
}

// sourceEvents matches each content to the session event it was built
// from, in order: the next event whose content has the same role and the
// same first part (text, or function call or response name). A content
// without one takes the previous event's id plus its offset.
func sourceEvents(sess session.Session, contents []*genai.Content, invocation string) []source {
	var events []*session.Event
	if sess != nil {
		for ev := range sess.Events().All() {
			if ev != nil && !ev.Partial && ev.Content != nil && len(ev.Content.Parts) > 0 {
				events = append(events, ev)
			}
		}
	}
	out := make([]source, len(contents))
	next, prev, offset := 0, "start:"+invocation, 0
	for i, c := range contents {
		found := false
		for j := next; j < len(events); j++ {
			if sameStart(events[j].Content, c) {
				ev := events[j]
				out[i] = source{id: ev.ID, author: ev.Author, time: ev.Timestamp}
				prev, offset, next, found = ev.ID, 0, j+1, true
				break
			}
		}
		if !found {
			offset++
			out[i] = source{id: fmt.Sprintf("%s+%d", prev, offset)}
			if c != nil {
				out[i].author = string(c.Role)
			}
		}
	}
	return out
}

func sameStart(a, b *genai.Content) bool {
	if a == nil || b == nil || a.Role != b.Role {
		return false
	}
	return partKey(first(a)) == partKey(first(b))
}

func first(c *genai.Content) *genai.Part {
	for _, p := range c.Parts {
		if p != nil {
			return p
		}
	}
	return nil
}

func partKey(p *genai.Part) string {
	switch {
	case p == nil:
		return ""
	case p.FunctionCall != nil:
		return "call:" + p.FunctionCall.Name
	case p.FunctionResponse != nil:
		return "response:" + p.FunctionResponse.Name
	default:
		return "text:" + p.Text
	}
}

// renderContent renders one pruned content as a Markdown list item:
// "- <author> (<time>): <text>", function calls and responses as JSON cut
// to 1,000 characters, continuation lines indented.
func renderContent(c *genai.Content, src source) string {
	var parts []string
	if c != nil {
		for _, p := range c.Parts {
			switch {
			case p == nil || p.Thought:
			case p.FunctionCall != nil:
				args, _ := json.Marshal(p.FunctionCall.Args)
				parts = append(parts, fmt.Sprintf("called `%s` with %s", p.FunctionCall.Name, cutRunes(string(args), 1000)))
			case p.FunctionResponse != nil:
				res, _ := json.Marshal(p.FunctionResponse.Response)
				parts = append(parts, fmt.Sprintf("`%s` returned %s", p.FunctionResponse.Name, cutRunes(string(res), 1000)))
			case strings.TrimSpace(p.Text) != "" && !strings.HasPrefix(p.Text, memory.BlockOpen):
				parts = append(parts, strings.TrimSpace(p.Text))
			}
		}
	}
	head := cmp.Or(src.author, "unknown")
	if !src.time.IsZero() {
		head += " (" + src.time.UTC().Format(time.RFC3339) + ")"
	}
	return pruned.Format(head, parts)
}
