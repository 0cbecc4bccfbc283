package eino

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
)

// DefaultPrunedFile is the default [HistoryWindow].File.
const DefaultPrunedFile = pruned.DefaultFile

// HistoryWindow is the opt-in pruned-history window of a [Middleware]
// ([Options.HistoryWindow]). Before each model call whose input holds more
// than Max messages besides the leading system message, the oldest are
// left out of the model's input (the agent's messages and the
// application's history keep them) and a background job appends them,
// oldest first, to the user's notebook file File with
// [pruned.AppendQueue], so the model still finds them in the injected
// file list, with read_memory and with search_memory.
//
// The cut never separates a tool result from its call: the kept messages
// start with a user message or, when none is within reach, with the first
// message that is not a tool result; when even that is impossible the
// input is sent whole.
//
// The file never fills up: when an append would take it past the
// notebook's file limit (memory.Limits.MaxMemorySize, 65,536 characters by
// default), the window goes on in the next file of a series, File with
// "_0002", "_0003", … before its extension (pruned_0002.md, listed after
// pruned.md; see [pruned.SeriesPath]), so no append fails for size. MaxFiles
// and MaxAge set a retention for the old files, deleted through the store
// (recorded in its history, with updated_by "agentmem-retention").
//
// Each pruned message is appended exactly once, under an operation id
// derived from its Eino message id (adk.GetMessageID: Eino stamps one on
// every model output and tool result). A message without one (the user's
// prompts, unless the application gave them ids with adk.EnsureMessageID)
// takes the id of the next message that has one, plus its distance to it,
// which is stable as long as the application passes the same history
// (the messages Eino returned, ids included). A message with no id after
// it takes its position and a digest of its content: equal messages at
// the same position of two conversations of one user are then appended
// once only.
//
// The fields are those of [pruned.WindowOptions], in messages: Max turns
// the window on (the leading system message aside), and Op defaults to
// "eino-prune:". [NewMiddleware] fails with pruned.ErrNilModel for a
// Consolidate without a Model; [Middleware.Flush] waits for the
// consolidations due and [Middleware.Close] stops them.
type HistoryWindow struct {
	// WindowOptions holds the window's bound, file, queue, retention,
	// error hook and consolidation; an item is one message of a model
	// call.
	pruned.WindowOptions
}

// Flush waits until every pruned message queued so far is appended (or has
// failed), and returns the first failure not yet reported when the
// notebook's InjectionErrors mode is memory.RaiseErrors; with
// [HistoryWindow].Consolidate, it then waits for the consolidations due
// (their failures go to OnError, not here). It returns nil at once without
// a history window.
func (m *Middleware) Flush(ctx context.Context) error {
	if m.win == nil {
		return nil
	}
	return m.win.Flush(ctx)
}

// Close flushes (see [Middleware.Flush]) and closes the history window:
// later model calls that would prune fail with pruned.ErrQueueClosed, and
// background consolidation stops after the runs already due. Call it when
// the application shuts down. Without a history window it does nothing.
func (m *Middleware) Close(ctx context.Context) error {
	if m.win == nil {
		return nil
	}
	return m.win.Close(ctx)
}

// prune cuts the oldest messages beyond the window, queues them and
// returns the kept input. With block set, the memory block is still to be
// added: when the kept messages hold no user text for it to join, it
// becomes a message of its own, so one message less is kept.
func (m *Middleware) prune(ctx context.Context, ns string, msgs []*schema.Message, block bool) ([]*schema.Message, error) {
	if err := m.win.Err(); err != nil {
		return nil, fmt.Errorf("eino: pruned history: %w", err)
	}
	sys := 0
	for sys < len(msgs) && msgs[sys] != nil && msgs[sys].Role == schema.System {
		sys++
	}
	body := msgs[sys:]
	k := m.win.Cut(pruned.WindowItems{
		N:      len(body),
		Prefer: func(i int) bool { return body[i] != nil && body[i].Role == schema.User },
		Allow:  func(i int) bool { return body[i] != nil && body[i].Role != schema.Tool },
		UserText: func(i int) bool {
			msg := body[i]
			return msg != nil && msg.Role == schema.User && (msg.Content != "" || len(msg.UserInputMultiContent) > 0)
		},
	}, block)
	if k == 0 {
		return msgs, nil
	}
	path, err := m.win.Path(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("eino: pruned history: %w", err)
	}
	items := make([]pruned.Item, 0, k)
	for i, msg := range body[:k] {
		items = append(items, pruned.Item{Key: messageKey(body, i), Text: render(msg)})
	}
	if err := m.win.Add(ctx, ns, path, items); err != nil {
		return nil, err
	}
	return append(slices.Clip(msgs[:sys]), body[k:]...), nil
}

// messageKey is the stable identity of msgs[i] (see [HistoryWindow]).
func messageKey(msgs []*schema.Message, i int) string {
	if msgs[i] != nil {
		if id := adk.GetMessageID(msgs[i]); id != "" {
			return "id:" + id
		}
	}
	for j := i + 1; j < len(msgs); j++ {
		if msgs[j] != nil {
			if id := adk.GetMessageID(msgs[j]); id != "" {
				return "before:" + id + ":" + strconv.Itoa(j-i)
			}
		}
	}
	sum := sha256.Sum256([]byte(render(msgs[i]) + "\x00"))
	return "position:" + strconv.Itoa(i) + ":" + hex.EncodeToString(sum[:])
}

// render renders one pruned message as a Markdown list item: "- <role>:
// <text>", tool calls and results cut to 1,000 characters, continuation
// lines indented.
func render(msg *schema.Message) string {
	if msg == nil {
		return pruned.Format("unknown", nil)
	}
	var parts []string
	if text := strings.TrimSpace(msg.Content); text != "" && !strings.HasPrefix(text, memory.BlockOpen) {
		parts = append(parts, text)
	}
	for _, p := range msg.UserInputMultiContent {
		if text := strings.TrimSpace(p.Text); text != "" && !strings.HasPrefix(text, memory.BlockOpen) {
			parts = append(parts, text)
		}
	}
	for _, c := range msg.ToolCalls {
		args, _ := driver.CutRunes(c.Function.Arguments, 1000)
		parts = append(parts, fmt.Sprintf("called `%s` with %s", c.Function.Name, args))
	}
	head := string(msg.Role)
	if msg.Role == schema.Tool {
		head = fmt.Sprintf("tool `%s`", msg.ToolName)
		if len(parts) > 0 {
			res, _ := driver.CutRunes(strings.Join(parts, "\n"), 1000)
			parts = []string{"returned " + res}
		}
	}
	return pruned.Format(head, parts)
}
