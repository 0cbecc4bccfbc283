package pruned

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// WindowOptions configures a [Window]. Zero values mean the defaults.
type WindowOptions struct {
	// Max is the most items a model request keeps. 0 (the default) cuts
	// nothing (an adapter's window is off); negative values are treated
	// as 0.
	Max int
	// File is the notebook file, in the user's scope, that receives the
	// pruned items. Default [DefaultFile] ("pruned.md"). A name that
	// is not a valid memory file name fails every append
	// (store.ErrInvalidPath).
	File string
	// Op prefixes the operation id of each pruned item (such as
	// "adk-prune:"), so two frameworks' windows never share an id. Default
	// none; each adapter sets its own.
	Op string
	// QueueSize bounds the items waiting to be appended; a model request
	// that finds the queue full waits for room (or its context). Default
	// [DefaultQueueSize] (256).
	QueueSize int
	// MaxFiles, when > 0, keeps at most this many files of the pruned
	// file's series (the current one included); older ones are deleted
	// when the series moves to a new file (see [RotateOptions]). 0 keeps
	// them all.
	MaxFiles int
	// MaxAge, when > 0, deletes the files of the series (never the current
	// one) last appended to longer ago than MaxAge, when the series moves
	// to a new file (see [RotateOptions]). 0 keeps them all.
	MaxAge time.Duration
	// OnError, when set, receives every failed append, from the window's
	// goroutine (it must not call Flush or Close), and every failed
	// consolidation unless Consolidate.OnError is set. Failures follow
	// memory.Options.InjectionErrors: logged at Warn in IgnoreErrors mode; in
	// RaiseErrors mode also returned by the next model request, Flush or
	// Close.
	OnError func(ctx context.Context, err error)
	// Consolidate, when set (with its Model), turns the pruned items into
	// notes in the background ([Consolidate], through a [Trigger];
	// see [WindowTriggerOptions]): once Consolidate.Every items of a user
	// were newly pruned (default 20; items pruned again by later requests
	// count once), and every Consolidate.Interval when set. Runs happen on
	// the trigger's goroutine, one at a time, at most Consolidate.MaxRuns
	// in a row per user, each after the queued appends landed: a model
	// request never waits for one, and their failures go to
	// Consolidate.OnError (else OnError) and the notebook's logger, never
	// to a request. Consolidate.Options.PrunedFile defaults to File.
	// Flush waits for the runs due, Close stops the trigger; items pruned
	// since the last run stay for the next one (or `agentmem
	// consolidate`). A Consolidate without a Model is ErrNilModel.
	// Nil means no consolidation.
	Consolidate *TriggerOptions
}

// Window is the part of a pruned-history window that does not depend on
// an agent framework (the adk and eino adapters' HistoryWindow): where a
// model request is cut, the [AppendQueue] that appends each pruned item to
// the user's file once (its operation id derives from the path and the
// item's key), and the optional consolidation [Trigger]. The adapter
// tells it, per item of its framework's request, how the kept items may
// start, and renders the pruned ones ([Format]). It is safe for
// concurrent use.
type Window struct {
	opts    WindowOptions
	mem     *memory.Memory
	queue   *AppendQueue
	trigger *Trigger // nil without Consolidate
}

// NewWindow returns a window over m. It fails with the error of
// [NewTrigger] (ErrNilModel) for a Consolidate without a
// Model, and with [store.ErrNilArgument] when m is nil.
func NewWindow(m *memory.Memory, o *WindowOptions) (*Window, error) {
	if m == nil {
		return nil, fmt.Errorf("pruned: pass NewWindow a Memory from memory.New, not nil: %w", store.ErrNilArgument)
	}
	w := &Window{mem: m}
	if o != nil {
		w.opts = *o
	}
	if w.opts.File == "" {
		w.opts.File = DefaultFile
	}
	var err error
	if w.queue, err = NewAppendQueue(m, &QueueOptions{Size: w.opts.QueueSize, OnError: w.opts.OnError,
		Rotate: &RotateOptions{MaxFiles: w.opts.MaxFiles, MaxAge: w.opts.MaxAge}}); err != nil {
		return nil, err
	}
	if c := w.opts.Consolidate; c != nil {
		if w.trigger, err = NewTrigger(m, WindowTriggerOptions(*c, w.opts.File, w.queue, w.opts.OnError)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// WindowItems describes, by index, the items of one model request to
// [Window.Cut].
type WindowItems struct {
	// N is the number of items.
	N int
	// Prefer reports an item the kept items best start with: user input
	// that answers no tool call.
	Prefer func(i int) bool
	// Allow reports an item the kept items may start with when no
	// preferred one is in reach: one that answers no tool call, so the
	// cut never separates a call from its result.
	Allow func(i int) bool
	// UserText reports an item that holds user text, which the memory
	// block joins.
	UserText func(i int) bool
}

// Cut returns how many leading items to leave out so that at most Max
// remain and the kept ones start at the first of the last Max items that
// Prefer reports, else the first that Allow reports; 0 when nothing needs
// to or can go. With block set (the memory block is still to be added),
// when no kept item holds user text the block becomes an item of its own,
// so one item less is kept.
func (w *Window) Cut(items WindowItems, block bool) int {
	k := cutPoint(items, w.opts.Max)
	if block && w.opts.Max > 1 {
		for i := k; i < items.N; i++ {
			if items.UserText(i) {
				return k
			}
		}
		k = cutPoint(items, w.opts.Max-1)
	}
	return k
}

func cutPoint(items WindowItems, max int) int {
	n := items.N
	if max <= 0 || n <= max {
		return 0
	}
	for i := n - max; i < n; i++ {
		if items.Prefer(i) {
			return i
		}
	}
	for i := n - max; i < n; i++ {
		if items.Allow(i) {
			return i
		}
	}
	return 0
}

// Path returns the file of the pruned items of namespace ns: File in the
// scope of ns.
func (w *Window) Path(ctx context.Context, ns string) (string, error) {
	scope, err := w.mem.Scope(ctx, memory.Invocation{Namespace: ns})
	if err != nil {
		return "", err
	}
	return scope + "/" + w.opts.File, nil
}

// Item is one item a model request left out, for [Window.Add].
type Item struct {
	// Key is the item's stable identity in its conversation (such as its
	// framework's message or event id): an item with the same key is
	// appended once only.
	Key string
	// Text is what is appended ([Format]).
	Text string
}

// Add queues the pruned items of namespace ns for path (from
// [Window.Path]), oldest first, and reports them to the consolidation
// trigger. It waits for room in the queue, and fails with ctx's error or
// [ErrQueueClosed].
func (w *Window) Add(ctx context.Context, ns, path string, items []Item) error {
	ops := make([]string, 0, len(items))
	for _, it := range items {
		op := w.opts.Op + opDigest(path, it.Key)
		if err := w.queue.Add(ctx, path, it.Text, op); err != nil {
			return err
		}
		ops = append(ops, op)
	}
	if w.trigger != nil {
		w.trigger.PrunedOnce(ctx, ns, ops...)
	}
	return nil
}

// opDigest is the hex SHA-256 of path and key, each followed by a zero
// byte (the adapters' operation ids before Window, kept so that a restart
// after an upgrade appends nothing twice).
func opDigest(path, key string) string {
	sum := sha256.Sum256([]byte(path + "\x00" + key + "\x00"))
	return hex.EncodeToString(sum[:])
}

// Err returns the first failed append not yet reported, in the notebook's
// RaiseErrors mode (see [AppendQueue.Err]).
func (w *Window) Err() error { return w.queue.Err() }

// Flush waits until every item queued so far is appended (or has failed)
// and returns the first failure not yet reported in RaiseErrors mode; with
// Consolidate it then waits for the consolidations due (their failures go
// to OnError, not here).
func (w *Window) Flush(ctx context.Context) error {
	err := w.queue.Flush(ctx)
	if w.trigger != nil {
		if werr := w.trigger.Flush(ctx); err == nil {
			err = werr
		}
	}
	return err
}

// Close flushes (see [Window.Flush]) and closes the window: later calls of
// Add fail with [ErrQueueClosed], and consolidation stops after the runs
// already due.
func (w *Window) Close(ctx context.Context) error {
	err := w.queue.Close(ctx)
	if w.trigger != nil {
		if cerr := w.trigger.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

// Format renders one pruned item as a Markdown list item:
// "- <head>: <parts, one a line>", continuation lines indented, and
// "(no text)" without parts.
func Format(head string, parts []string) string {
	body := strings.Join(parts, "\n")
	if body == "" {
		body = "(no text)"
	}
	return "- " + head + ": " + strings.ReplaceAll(body, "\n", "\n  ")
}
