package eino_test

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

	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
	agentmemeino "github.com/agentmem/agentmem/eino"
	"github.com/agentmem/agentmem/eino/einotest"
)

// blockingModel is a consolidation model whose Generate waits for release:
// it reports each request on entered and answers "- note <n>", or fails.
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

// TestHistoryWindowConsolidates: with HistoryWindow.Consolidate, the
// window consolidates a user's pruned messages in the background: the
// agent's turns complete while the model is still answering, the edits
// land once it answers, and they name the consolidator.
func TestHistoryWindowConsolidates(t *testing.T) {
	mem, s := newMemory(t, nil)
	prompts, scripts := conversation(6)
	llm := einotest.NewModel(scripts)
	model := &blockingModel{entered: make(chan int, 16), release: make(chan struct{})}
	r, mw := newWindowRunner(t, llm, mem, agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2, Consolidate: &pruned.TriggerOptions{Model: model, Every: 2}}})
	ctx := memory.WithUserID(t.Context(), "kamal")
	var history []*schema.Message
	history = converse(t, ctx, r, history, prompts[0])
	history = converse(t, ctx, r, history, prompts[1]) // prunes prompt 1 and answer 1: due
	select {
	case <-model.entered:
	case <-time.After(30 * time.Second): // a hang guard, not a timing check
		t.Fatal("no consolidation reached the model")
	}
	// The consolidation waits for its model; the agent's turns do not.
	for _, p := range prompts[2:] {
		history = converse(t, ctx, r, history, p)
	}
	if n := len(llm.Requests()); n != 6 {
		t.Fatalf("%d model calls while the consolidation waited", n)
	}
	if _, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 1<<16); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MEMORY.md before the model answered: %v", err)
	}
	close(model.release)
	if err := mw.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	// The first run, then one more (due again while the first ran) that
	// reads all that was left: two notes, each once.
	if f.Content != "- note 1\n- note 2\n" || f.Metadata[memory.UpdatedByKey] != pruned.ConsolidatorName+"/scripted" {
		t.Fatalf("MEMORY.md = %q, %v", f.Content, f.Metadata)
	}
}

// TestHistoryWindowConsolidationErrors: a failed consolidation reaches
// OnError and the logger, never a model call; NewMiddleware refuses a
// Consolidate without a model.
func TestHistoryWindowConsolidationErrors(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	mem, err := memory.New(store.New(newMemDriver(t), nil), &memory.Options{
		InjectionErrors: memory.RaiseErrors, Logger: slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("model down")
	model := &blockingModel{entered: make(chan int, 16), release: make(chan struct{}), fail: boom}
	close(model.release)
	reported := make(chan error, 16)
	prompts, scripts := conversation(4)
	r, mw := newWindowRunner(t, einotest.NewModel(scripts), mem, agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2,
		OnError: func(_ context.Context, err error) { reported <- err }, Consolidate: &pruned.TriggerOptions{Model: model, Every: 1}}})
	ctx := memory.WithUserID(t.Context(), "kamal")
	var history []*schema.Message
	for _, p := range prompts {
		history = converse(t, ctx, r, history, p) // fails the test on any error
	}
	if err := mw.Close(t.Context()); err != nil {
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
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "model down") {
		t.Fatalf("logs: %q", logs.String())
	}
	if _, err := agentmemeino.NewMiddleware(mem, &agentmemeino.Options{HistoryWindow: agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{
		Max: 2, Consolidate: &pruned.TriggerOptions{}}}}); !errors.Is(err, pruned.ErrNilModel) {
		t.Fatalf("a Consolidate without a model: %v", err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
