package adk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

var epoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// runConversation runs the prompts in one session with a deterministic
// context (same ids and times on every call with the same prefix).
func runConversation(t *testing.T, r *rig, user, sessionID, prefix string, prompts []string) {
	t.Helper()
	ctx := adktest.Deterministic(t.Context(), prefix, epoch)
	for _, p := range prompts {
		for _, err := range r.runner.Run(ctx, user, sessionID, genai.NewContentFromText(p, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("run %q: %v", p, err)
			}
		}
	}
}

// prunedLines returns the list items of the pruned file.
func prunedLines(t *testing.T, s *store.Store, path string) []string {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1<<16)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n")
}

func TestHistoryWindow(t *testing.T) {
	mem, s := newMemory(t, nil)
	prompts, scripts := adktest.Conversation(20) // 40 contents
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 20}}})
	r := newRig(t, scripts, ts)
	runConversation(t, r, "kamal", "s1", "ev", prompts)
	if err := ts.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, req := range r.model.Requests() {
		if n := len(req.Contents); n > 20 {
			t.Fatalf("request %d carries %d contents", i, n)
		}
		if c := req.Contents[0]; c.Role != genai.RoleUser || !strings.HasPrefix(c.Parts[0].Text, "prompt ") {
			t.Fatalf("request %d starts with %+v", i, c)
		}
	}
	last := r.model.Requests()[19]
	if got := last.Contents[0].Parts[0].Text; got != "prompt 11" || len(last.Contents) != 19 {
		t.Fatalf("last request starts at %q with %d contents", got, len(last.Contents))
	}
	want := []string{}
	for i := 1; i <= 10; i++ {
		want = append(want, fmt.Sprintf("- user (%s): prompt %d", "", i), fmt.Sprintf("- assistant (%s): answer %d", "", i))
	}
	check := func(what string) {
		t.Helper()
		got := prunedLines(t, s, "kamal/main/pruned.md")
		if len(got) != len(want) {
			t.Fatalf("%s: pruned.md has %d lines, want %d:\n%s", what, len(got), len(want), strings.Join(got, "\n"))
		}
		for i := range got {
			w := strings.SplitN(want[i], " (", 2)
			if !strings.HasPrefix(got[i], w[0]+" (2026-11-30T09:") || !strings.HasSuffix(got[i], "): "+strings.SplitN(w[1], "): ", 2)[1]) {
				t.Fatalf("%s: line %d = %q, want %q", what, i, got[i], want[i])
			}
		}
	}
	check("run")
	// The session keeps every content.
	got, err := r.sessions.Get(t.Context(), &session.GetRequest{AppName: app, UserID: "kamal", SessionID: "s1"})
	if err != nil || got.Session.Events().Len() != 40 {
		t.Fatalf("session: %v", err)
	}
	// The snapshot lists pruned.md to the model: the appends are made in
	// the background, so the last request may come before the first one
	// lands (then the notebook is empty and no block is injected); once
	// the window is closed (its appends flushed), the next request's block
	// lists it.
	if b := adktest.MemoryBlocks(last.LLMRequest); len(b) > 1 || len(b) == 1 && !strings.Contains(b[0], "pruned.md") {
		t.Fatalf("memory blocks of the last request: %q", b)
	}
	if block, err := mem.Snapshot(t.Context(), "kamal"); err != nil || !strings.Contains(block, "pruned.md") {
		t.Fatalf("the snapshot after the window closed = %q, %v; want it to list pruned.md", block, err)
	}

	// A replay (same event ids, a new process: new toolset, new sessions)
	// appends nothing.
	ts2 := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 20}}})
	runConversation(t, newRig(t, scripts, ts2), "kamal", "s1", "ev", prompts)
	if err := ts2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	check("replay")
}

// TestHistoryWindowKeepsToolPairs: the cut never leaves a function
// response without its call.
func TestHistoryWindowKeepsToolPairs(t *testing.T) {
	mem, s := newMemory(t, nil)
	scripts := map[string][]adktest.Step{}
	var prompts []string
	for i := 1; i <= 6; i++ {
		p := fmt.Sprintf("fact %d", i)
		prompts = append(prompts, p)
		scripts[p] = []adktest.Step{
			adktest.Call(fmt.Sprintf("w%d", i), memory.WriteTool, map[string]any{"content": p, "file": nil, "old_text": nil}),
			adktest.Call(fmt.Sprintf("s%d", i), memory.SearchTool, map[string]any{"query": p}),
			adktest.Text("ok " + p),
		}
	}
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 4}}})
	r := newRig(t, scripts, ts)
	runConversation(t, r, "kamal", "s1", "ev", prompts)
	if err := ts.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	cut := 0
	for i, req := range r.model.Requests() {
		if len(req.Contents) > 4 {
			t.Fatalf("request %d carries %d contents", i, len(req.Contents))
		}
		calls := map[string]bool{}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionCall != nil {
					calls[p.FunctionCall.ID] = true
				}
				if p.FunctionResponse != nil && !calls[p.FunctionResponse.ID] {
					t.Fatalf("request %d: response %s without its call", i, p.FunctionResponse.ID)
				}
			}
		}
		if req.Contents[0].Role != genai.RoleUser {
			cut++ // a tool loop longer than the window starts at a call
		}
	}
	if cut == 0 {
		t.Fatal("no request was cut inside a tool loop; the test does not exercise the pairing rule")
	}
	// Every content left out is in pruned.md exactly once, in order.
	pruned := strings.Join(prunedLines(t, s, "kamal/main/pruned.md"), "\n")
	for i := 1; i <= 5; i++ {
		for _, want := range []string{fmt.Sprintf("): fact %d\n", i), fmt.Sprintf("called `write_memory` with {\"content\":\"fact %d\"", i)} {
			if strings.Count(pruned+"\n", want) != 1 {
				t.Fatalf("pruned.md holds %q %d times:\n%s", want, strings.Count(pruned+"\n", want), pruned)
			}
		}
	}
}

// failing fails every write of a path ending in suffix.
type failing struct {
	driver.Driver
	suffix string
}

var errBackend = errors.New("backend down")

func (f failing) CreateFile(ctx context.Context, file driver.File) error {
	if strings.HasSuffix(file.Path, f.suffix) {
		return errBackend
	}
	return f.Driver.CreateFile(ctx, file)
}

// TestHistoryWindowOwnOnError: the window's own OnError (a field of
// pruned.WindowOptions) receives its failed appends instead of
// Options.OnError, which keeps the tool calls' errors.
func TestHistoryWindowOwnOnError(t *testing.T) {
	prompts, scripts := adktest.Conversation(4)
	s := store.New(failing{Driver: newMemDriver(t), suffix: "pruned.md"}, nil)
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	window, toolset := make(chan error, 100), make(chan error, 100)
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{
		HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2,
			OnError: func(_ context.Context, err error) { window <- err }}},
		OnError: func(_ context.Context, err error) { toolset <- err },
	})
	r := newRig(t, scripts, ts)
	for _, p := range prompts[:2] { // the second request prunes prompt 1 and answer 1
		ctx := adktest.Deterministic(t.Context(), "ev-"+p, epoch)
		for _, err := range r.runner.Run(ctx, "kamal", "s1", genai.NewContentFromText(p, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := ts.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 2 { // prompt 1 and answer 1
		select {
		case err := <-window:
			if !errors.Is(err, errBackend) {
				t.Fatalf("the window's OnError got %v", err)
			}
		case err := <-toolset:
			t.Fatalf("Options.OnError got the window's failure: %v", err)
		case <-time.After(30 * time.Second): // a hang guard, not a timing check
			t.Fatal("no failure reported")
		}
	}
}

func TestHistoryWindowErrors(t *testing.T) {
	prompts, scripts := adktest.Conversation(4)
	for _, mode := range []memory.ErrorMode{memory.IgnoreErrors, memory.RaiseErrors} {
		t.Run(string(mode), func(t *testing.T) {
			var logs bytes.Buffer
			s := store.New(failing{Driver: newMemDriver(t), suffix: "pruned.md"}, nil)
			mem, err := memory.New(s, &memory.Options{InjectionErrors: mode, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))})
			if err != nil {
				t.Fatal(err)
			}
			reported := make(chan error, 100)
			ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{
				HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2}},
				OnError:       func(_ context.Context, err error) { reported <- err },
			})
			r := newRig(t, scripts, ts)
			await := func(n int) {
				t.Helper()
				for range n {
					select {
					case err := <-reported:
						if !errors.Is(err, errBackend) {
							t.Fatalf("OnError got %v", err)
						}
					case <-time.After(30 * time.Second): // a hang guard, not a timing check
						t.Fatal("no failure reported")
					}
				}
			}
			run := func(prompt string) error {
				var runErr error
				ctx := adktest.Deterministic(t.Context(), "ev-"+prompt, epoch)
				for _, err := range r.runner.Run(ctx, "kamal", "s1", genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
					if err != nil && runErr == nil {
						runErr = err
					}
				}
				return runErr
			}
			for _, p := range prompts[:2] { // the second request prunes prompt 1 and answer 1
				if err := run(p); err != nil {
					t.Fatal(err)
				}
			}
			flushErr := ts.Flush(t.Context())
			await(2)
			switch mode {
			case memory.IgnoreErrors:
				if flushErr != nil || !strings.Contains(logs.String(), "backend down") {
					t.Fatalf("flush %v, logs %q", flushErr, logs.String())
				}
				for _, p := range prompts[2:] {
					if err := run(p); err != nil {
						t.Fatalf("run in ignore mode: %v", err)
					}
				}
			case memory.RaiseErrors:
				if !errors.Is(flushErr, errBackend) || logs.Len() != 0 {
					t.Fatalf("flush %v, logs %q", flushErr, logs.String())
				}
				// Flush reported the failure; this request retries the two
				// contents and prunes two more: four failures.
				if err := run(prompts[2]); err != nil {
					t.Fatal(err)
				}
				await(4)
				if err := run(prompts[3]); !errors.Is(err, errBackend) {
					t.Fatalf("the request after a failure: %v", err)
				}
			}
		})
	}
}

// syncWriter serializes writes of the background job and reads of the
// test.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestCloseStopsPruning(t *testing.T) {
	mem, _ := newMemory(t, nil)
	prompts, scripts := adktest.Conversation(3)
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2}}})
	r := newRig(t, scripts, ts)
	runConversation(t, r, "kamal", "s1", "ev", prompts[:1])
	if err := ts.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	var runErr error
	for _, err := range r.runner.Run(t.Context(), "kamal", "s1", genai.NewContentFromText(prompts[1], genai.RoleUser), agent.RunConfig{}) {
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if !errors.Is(runErr, pruned.ErrQueueClosed) {
		t.Fatalf("run after Close: %v", runErr)
	}
	// Without a window, Flush and Close do nothing.
	plain := agentmemadk.NewToolset(mem, nil)
	if plain.Flush(t.Context()) != nil || plain.Close(t.Context()) != nil {
		t.Fatal("Flush/Close without a window")
	}
}

// TestHistoryWindowRotates: with a 400-character file limit, 38 pruned
// contents go on past pruned.md into pruned_0002.md, …, each once and in
// order; a replay changes nothing; MaxFiles keeps the newest files only.
func TestHistoryWindowRotates(t *testing.T) {
	for _, maxFiles := range []int{0, 2} {
		t.Run(fmt.Sprint("max_files_", maxFiles), func(t *testing.T) {
			mem, s := newMemory(t, &memory.Options{Limits: memory.Limits{MaxMemorySize: 400}})
			prompts, scripts := adktest.Conversation(20)
			w := agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2, MaxFiles: maxFiles}}
			series := func() map[string]string {
				t.Helper()
				files, err := pruned.SeriesPaths(t.Context(), s, "kamal/main/pruned.md")
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]string{}
				for _, p := range files {
					out[p] = strings.Join(prunedLines(t, s, p), "\n")
				}
				return out
			}
			ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: w})
			runConversation(t, newRig(t, scripts, ts), "kamal", "s1", "ev", prompts)
			if err := ts.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			before := series()
			var lines []string
			for i := 1; ; i++ {
				c, ok := before[pruned.SeriesPath("kamal/main/pruned.md", i)]
				if !ok {
					if maxFiles == 0 || len(lines) > 0 {
						break
					}
					continue // deleted by the retention
				}
				lines = append(lines, strings.Split(c, "\n")...)
			}
			if maxFiles == 0 && (len(before) < 4 || len(lines) != 38) || maxFiles > 0 && len(before) != maxFiles {
				t.Fatalf("%d files, %d lines:\n%s", len(before), len(lines), strings.Join(lines, "\n"))
			}
			for k, l := range lines {
				i := k + 38 - len(lines) // the retention keeps the last lines
				want := fmt.Sprintf("): prompt %d", i/2+1)
				if i%2 == 1 {
					want = fmt.Sprintf("): answer %d", i/2+1)
				}
				if !strings.HasSuffix(l, want) {
					t.Fatalf("line %d = %q, want …%q", k, l, want)
				}
			}
			ts2 := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: w})
			runConversation(t, newRig(t, scripts, ts2), "kamal", "s1", "ev", prompts)
			if err := ts2.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			if after := series(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("the replay changed the series:\n%v\nwas\n%v", after, before)
			}
		})
	}
}

// blockingModel is a consolidation model whose Generate waits for release:
// it reports each request on entered and answers "- note <n>".
type blockingModel struct {
	entered chan int
	release chan struct{}
	fail    error

	mu sync.Mutex
	n  int
}

func (m *blockingModel) Generate(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	m.mu.Unlock()
	m.entered <- n
	<-m.release
	if m.fail != nil {
		return pruned.ModelResponse{}, m.fail
	}
	return pruned.ModelResponse{Model: "scripted", Text: fmt.Sprintf(`{"edits":[{"file":null,"content":"- note %d","old_text":null}]}`, n)}, nil
}

// awaitEntered waits for the model's next request (a hang guard, not a
// timing check).
func awaitEntered(t *testing.T, m *blockingModel) int {
	t.Helper()
	select {
	case n := <-m.entered:
		return n
	case <-time.After(30 * time.Second):
		t.Fatal("no consolidation reached the model")
		return 0
	}
}

// TestHistoryWindowConsolidates: with HistoryWindow.Consolidate, the
// window consolidates a user's pruned contents in the background: the
// agent's turns complete while the model is still answering, the edits
// land once the model answers, and they name the consolidator.
func TestHistoryWindowConsolidates(t *testing.T) {
	mem, s := newMemory(t, nil)
	prompts, scripts := adktest.Conversation(6)
	model := &blockingModel{entered: make(chan int, 16), release: make(chan struct{})}
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{
		Max: 2, Consolidate: &pruned.TriggerOptions{Model: model, Every: 2}}}})
	r := newRig(t, scripts, ts)
	r.run(t, "kamal", "s1", prompts[0])
	r.run(t, "kamal", "s1", prompts[1]) // prunes prompt 1 and answer 1: due
	awaitEntered(t, model)
	// The consolidation waits for its model; the agent's turns do not.
	for _, p := range prompts[2:] {
		r.run(t, "kamal", "s1", p)
	}
	if n := len(r.model.Requests()); n != 6 {
		t.Fatalf("%d model requests while the consolidation waited", n)
	}
	if f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 1<<16); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MEMORY.md before the model answered: %v, %v", f, err)
	}
	close(model.release)
	if err := ts.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	// Prompts 3–6 pruned 8 more contents: the first run, then one more
	// (the namespace was due again while the first ran), which reads all
	// that was left: two notes, each once.
	if f.Content != "- note 1\n- note 2\n" || f.Metadata[memory.UpdatedByKey] != pruned.ConsolidatorName+"/scripted" {
		t.Fatalf("MEMORY.md = %q, %v", f.Content, f.Metadata)
	}
}

// TestHistoryWindowConsolidationErrors: a failed consolidation reaches
// OnError and the logger, never a model request; a Consolidate without a
// model fails every request with pruned.ErrNilModel.
func TestHistoryWindowConsolidationErrors(t *testing.T) {
	var logs bytes.Buffer
	mem, err := memory.New(store.New(newMemDriver(t), nil), &memory.Options{
		InjectionErrors: memory.RaiseErrors, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("model down")
	model := &blockingModel{entered: make(chan int, 16), release: make(chan struct{}), fail: boom}
	close(model.release)
	reported := make(chan error, 16)
	prompts, scripts := adktest.Conversation(4)
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{
		HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2, Consolidate: &pruned.TriggerOptions{Model: model, Every: 1}}},
		OnError:       func(_ context.Context, err error) { reported <- err },
	})
	r := newRig(t, scripts, ts)
	for _, p := range prompts {
		r.run(t, "kamal", "s1", p) // fails the test on any error
	}
	if err := ts.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-reported:
		if !errors.Is(err, boom) {
			t.Fatalf("OnError got %v", err)
		}
	default:
		t.Fatal("OnError got nothing")
	}
	if !strings.Contains(logs.String(), "model down") {
		t.Fatalf("logs: %q", logs.String())
	}

	bad := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2, Consolidate: &pruned.TriggerOptions{}}}})
	var runErr error
	for _, err := range newRig(t, scripts, bad).runner.Run(t.Context(), "kamal", "s2", genai.NewContentFromText(prompts[0], genai.RoleUser), agent.RunConfig{}) {
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if !errors.Is(runErr, pruned.ErrNilModel) {
		t.Fatalf("a Consolidate without a model: %v", runErr)
	}
}
