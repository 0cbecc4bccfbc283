package e2e_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// TestHistoryRotation: over 200 KB of pruned history through ADK's
// history window, on every backend in both modes.
func TestHistoryRotation(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "history_rotation", Run: historyRotation})
	}
}

// rotationTurns and rotationAnswer size the conversation: 49 pruned
// answers of 4,200 characters (with the prompts, about 206 KB) cross the
// 65,536-character file limit three times.
const (
	rotationTurns  = 50
	rotationAnswer = 4200
)

// historyRotation: a 100-content conversation with a window of 2 prunes
// 98 contents (prompts and answers 1–49). No append fails; the series
// pruned.md, pruned_0002.md, … holds each of them exactly once, in order,
// every file within the limit; two concurrent replays of the whole run
// (new processes, same event ids) change nothing. Then four writers
// deliver the same twelve entries at once to a series with a small bound:
// each lands once.
func historyRotation(t *testing.T, e *contract.Env) {
	mem, err := memory.New(e.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompts, scripts := adktest.Conversation(rotationTurns)
	answer := func(i int) string {
		head := fmt.Sprintf("answer %d:", i)
		return head + strings.Repeat(" fare", (rotationAnswer-len(head))/5)
	}
	for i := 1; i <= rotationTurns; i++ {
		scripts[fmt.Sprintf("prompt %d", i)] = []adktest.Step{adktest.Text(answer(i))}
	}
	run := func() error {
		ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2}}})
		a, err := llmagent.New(llmagent.Config{Name: "travel_agent", Model: adktest.NewModel(scripts), Toolsets: []tool.Toolset{ts}})
		if err != nil {
			return err
		}
		r, err := runner.New(runner.Config{
			AppName: e2eApp, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true,
			PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{ts.Plugin()}},
		})
		if err != nil {
			return err
		}
		c := adktest.Deterministic(ctx(t), "ev", e2eEpoch)
		for _, p := range prompts {
			for _, err := range r.Run(c, "kamal", "kamal-1", genai.NewContentFromText(p, genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					return fmt.Errorf("%q: %w", p, err)
				}
			}
		}
		return ts.Close(c) // the notebook raises no errors; Close still reports a closed queue
	}
	const base = "kamal/main/pruned.md"
	snapshot := func(what string) map[string]string {
		t.Helper()
		files, err := pruned.SeriesPaths(ctx(t), e.Store, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < 4 || files[0] != base || files[1] != pruned.SeriesPath(base, 2) {
			t.Fatalf("%s: series %q", what, files)
		}
		out := map[string]string{}
		var lines []string
		for _, p := range files {
			f := read(t, e.Store, p, 1<<20)
			if n := len([]rune(f.Content)); n > memory.DefaultMaxMemorySize {
				t.Fatalf("%s: %s has %d characters", what, p, n)
			}
			out[p] = f.Content
			lines = append(lines, strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n")...)
		}
		if len(lines) != 2*(rotationTurns-1) {
			t.Fatalf("%s: %d pruned lines in %d files", what, len(lines), len(files))
		}
		for i, line := range lines {
			n := i/2 + 1
			head, tail := "- user (", fmt.Sprintf("): prompt %d", n)
			if i%2 == 1 {
				head, tail = "- travel_agent (", "): "+answer(n)
			}
			if !strings.HasPrefix(line, head) || !strings.HasSuffix(line, tail) {
				t.Fatalf("%s: pruned line %d = %.80q…", what, i+1, line)
			}
		}
		return out
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	before := snapshot("run")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = run() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if after := snapshot("replays"); !maps.Equal(after, before) {
		t.Fatalf("the replays changed the series: %d files, were %d", len(after), len(before))
	}

	// Contention at the boundaries: four writers, each delivering the same
	// twelve entries (in its own order) to a series bounded at 10,000.
	const contended, bound, entries = "kamal/main/contended.md", 10_000, 12
	entry := func(i int) string { return fmt.Sprintf("- entry %02d %s", i, strings.Repeat("z", 3000)) }
	errs = make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			for k := range entries {
				i := (k + 3*w) % entries
				if _, err := pruned.AppendSeries(ctx(t), e.Store, contended, entry(i), &memory.AppendOptions{
					OperationID: fmt.Sprintf("contended/%d", i), MaxMemorySize: bound,
				}, nil); err != nil {
					errs[w] = errors.Join(errs[w], fmt.Errorf("writer %d entry %d: %w", w, i, err))
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	files, err := pruned.SeriesPaths(ctx(t), e.Store, contended)
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, p := range files {
		f := read(t, e.Store, p, 1<<20)
		if n := len([]rune(f.Content)); n > bound {
			t.Fatalf("%s has %d characters", p, n)
		}
		all += f.Content
	}
	if len(files) < 4 || strings.Count(all, "\n") != entries {
		t.Fatalf("%d files, %d lines", len(files), strings.Count(all, "\n"))
	}
	for i := range entries {
		if strings.Count(all, entry(i)+"\n") != 1 {
			t.Fatalf("entry %d not exactly once", i)
		}
	}
	if _, err := e.Store.Read(ctx(t), pruned.SeriesPath(contended, len(files)+1), 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a file past the series: %v", err)
	}
}
