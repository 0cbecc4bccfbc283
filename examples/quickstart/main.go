// Command quickstart plays a two-run conversation with a Google ADK agent
// that has agentmem memory, on an embedded store persisted on disk: no
// cloud account, no API key, no network.
//
//	go run ./examples/quickstart          # scripted model
//	GEMINI_API_KEY=... go run ./examples/quickstart   # the real Gemini model
//
// Run 1: kamal says "I moved to Hanoi and hate early flights" and the model
// saves it with write_memory. Run 2, a new session: "Book me something to
// Bangkok", and the model's request already carries the memory block. It
// prints what the model saw and the MEMORY.md it left. Run the command
// again and run 1 finds the fact in memory too ("I already have that in
// memory"), and writes nothing: the memory outlives the process.
// search_memory ranks by meaning
// as well as words, with the offline word-vector embedder (module wordvec).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"os"
	"strings"
	"sync"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/model/gemini"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/wordvec"
)

const (
	remember = "I moved to Hanoi and hate early flights."
	book     = "Book me something to Bangkok."
	user     = "kamal"
)

func main() {
	db := flag.String("db", ".agent-memory.db", "SQLite database file of the memory")
	scripted := flag.Bool("scripted", false, "use the scripted model even when GEMINI_API_KEY or GOOGLE_API_KEY is set")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *db, *scripted); err != nil {
		log.Fatal(err)
	}
}

// run plays the two runs on the SQLite file db, printing to w. It returns (rather than
// exiting) on an error, so that closing the store, which finishes the
// search indexing of what was written, always happens.
func run(ctx context.Context, w io.Writer, db string, scripted bool) error {
	// The driver is the only line to change for another backend
	// (filestore.New, postgres.New, dynamodb.New, firestore.New,
	// cosmosdb.New).
	d, err := sqlite.New(ctx, db, nil)
	if err != nil {
		return err
	}
	// Search by meaning as well as words, offline: the word-vector
	// embedder needs no key and no network (or store.Open(ctx,
	// "sqlite:.agent-memory.db?embedder=openai:text-embedding-3-small", nil)).
	emb, err := wordvec.New(ctx, nil)
	if err != nil {
		return err
	}
	s := store.New(d, &store.Options{Embedder: emb})
	defer s.Close() // also finishes indexing what the run wrote

	mem, err := memory.New(s, nil) // namespace = the ADK user id
	if err != nil {
		return err
	}
	llm, name := chooseModel(ctx, scripted)
	rec := &recorder{LLM: llm}
	a, err := llmagent.New(llmagent.Config{
		Name:        "travel_agent",
		Model:       rec,
		Instruction: "You are a concise travel assistant.",
		Toolsets:    []tool.Toolset{agentmemadk.NewToolset(mem, nil)},
	})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: "quickstart", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "agentmem quickstart: memory in %s (SQLite), model %s\n", db, name)

	for i, prompt := range []string{remember, book} {
		fmt.Fprintf(w, "\n── run %d · user %s · new session ──\n", i+1, user)
		rec.reset()
		msg := genai.NewContentFromText(prompt, genai.RoleUser)
		var lines []string
		for ev, err := range r.Run(ctx, user, fmt.Sprintf("session-%d", i+1), msg, agent.RunConfig{}) {
			if err != nil {
				return err
			}
			lines = append(lines, describe(ev)...)
		}
		if block := rec.firstBlock(); block != "" {
			fmt.Fprintf(w, "the model's first request carried, beside the prompt:\n%s\n", block)
		} else {
			fmt.Fprintln(w, "the model's first request carried no memory block (nothing stored yet)")
		}
		fmt.Fprintf(w, "%s: %s\n%s\n", user, prompt, strings.Join(lines, "\n"))
	}

	path := user + "/main/" + memory.MainFile
	f, err := s.Read(ctx, user+"/main/"+memory.MainFile, memory.DefaultMaxMemorySize)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s:\n%s", path, f.Content)
	return nil
}

// chooseModel returns Gemini when a key is set (and -scripted is not), the
// scripted model otherwise.
func chooseModel(ctx context.Context, scripted bool) (model.LLM, string) {
	key := os.Getenv("GEMINI_API_KEY")
	if key == "" {
		key = os.Getenv("GOOGLE_API_KEY")
	}
	if key != "" && !scripted {
		m, err := gemini.NewModel(ctx, "gemini-2.5-flash", &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI})
		if err != nil {
			log.Fatal(err)
		}
		return m, "gemini-2.5-flash"
	}
	return scriptedModel(), "scripted (no network; set GEMINI_API_KEY for Gemini)"
}

// scriptedModel stands in for an LLM: it saves the fact unless the injected
// memory already holds it, and books around what memory says.
func scriptedModel() model.LLM {
	knows := func(req *model.LLMRequest, s string) bool {
		for _, b := range adktest.MemoryBlocks(req) {
			if strings.Contains(b, s) {
				return true
			}
		}
		return false
	}
	return adktest.NewModel(map[string][]adktest.Step{
		remember: {
			{Func: func(req *model.LLMRequest) adktest.Step {
				if knows(req, "Hanoi") {
					return adktest.Text("I already have that in memory: Hanoi, and no early flights.")
				}
				return adktest.Call("call-1", "write_memory",
					map[string]any{"content": "- moved to Hanoi; hates early flights", "file": nil, "old_text": nil})
			}},
			adktest.Text("Noted: you live in Hanoi and avoid early flights."),
		},
		book: {
			{Func: func(req *model.LLMRequest) adktest.Step {
				if knows(req, "early flights") {
					return adktest.Text("Hanoi → Bangkok, VN 615 departing 10:40 (no early flight). Shall I book it?")
				}
				return adktest.Text("From which city, and at what time of day?")
			}},
		},
	})
}

// describe renders an event's calls, tool results and answers.
func describe(ev *session.Event) []string {
	if ev == nil || ev.Content == nil {
		return nil
	}
	var out []string
	for _, p := range ev.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			b, _ := json.Marshal(p.FunctionCall.Args)
			out = append(out, fmt.Sprintf("model calls %s %s", p.FunctionCall.Name, b))
		case p.FunctionResponse != nil:
			b, _ := json.Marshal(p.FunctionResponse.Response)
			out = append(out, fmt.Sprintf("tool returns %s", b))
		case p.Text != "" && ev.Content.Role == genai.RoleModel && !p.Thought:
			out = append(out, "model: "+strings.TrimSpace(p.Text))
		}
	}
	return out
}

// recorder wraps a model and keeps the memory blocks of the requests it
// forwards, to show what the model saw.
type recorder struct {
	model.LLM
	mu     sync.Mutex
	blocks [][]string
}

func (r *recorder) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	r.mu.Lock()
	r.blocks = append(r.blocks, adktest.MemoryBlocks(req))
	r.mu.Unlock()
	return r.LLM.GenerateContent(ctx, req, stream)
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blocks = nil
}

func (r *recorder) firstBlock() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.blocks) == 0 {
		return ""
	}
	return strings.Join(r.blocks[0], "\n")
}
