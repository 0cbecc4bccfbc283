package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// Reference test 21: tool surface.
func TestToolSurface(t *testing.T) {
	m, s := newMem(t, nil)
	var names []string
	for _, sp := range m.Tools() {
		names = append(names, sp.Name)
	}
	if got := strings.Join(names, ","); got != "write_memory,read_memory,delete_memory,search_memory" {
		t.Fatalf("tools = %s", got)
	}
	if m.ID() != "memory" {
		t.Fatalf("ID = %q", m.ID())
	}
	props := map[string]string{
		"write_memory": "content,expires,file,old_text", "read_memory": "file", "delete_memory": "file", "search_memory": "query",
	}
	for _, sp := range m.Tools() {
		p := sp.InputSchema["properties"].(map[string]any)
		keys := slices.Sorted(func(y func(string) bool) {
			for k := range p {
				if !y(k) {
					return
				}
			}
		})
		if strings.Join(keys, ",") != props[sp.Name] || sp.Description == "" {
			t.Fatalf("%s: properties %v", sp.Name, keys)
		}
	}
	res := call(t, m, inv(""), "write_memory", map[string]any{"content": "- prefers uv", "file": nil, "old_text": nil})
	wantWrite(t, res)
	if got := memtest.Content(t, s, "main/MEMORY.md"); got != "- prefers uv\n" {
		t.Fatalf("MEMORY.md = %q", got)
	}
	org, _ := newMem(t, &Options{AgentName: "org", ToolPrefix: "org"})
	if org.ID() != "memory-org" || org.Tools()[0].Name != "org_write_memory" {
		t.Fatalf("prefixed: %s %s", org.ID(), org.Tools()[0].Name)
	}
	if !strings.Contains(org.Instructions(), "org_write_memory") {
		t.Fatal("default guidance does not name the prefixed tools")
	}
	// Each call returns a fresh copy: mutating one does not leak.
	m.Tools()[0].InputSchema["type"] = "broken"
	if m.Tools()[0].InputSchema["type"] != "object" {
		t.Fatal("schemas are shared")
	}
}

// strictErrors checks a schema against OpenAI strict mode (and what Gemini
// accepts): every object has additionalProperties false and requires all of
// its properties; types are JSON Schema type names or [type, "null"].
func strictErrors(path string, schema map[string]any) []string {
	var errs []string
	allowed := map[string]bool{"type": true, "description": true, "properties": true, "required": true,
		"additionalProperties": true, "items": true, "enum": true}
	for k := range schema {
		if !allowed[k] {
			errs = append(errs, fmt.Sprintf("%s: keyword %q not allowed", path, k))
		}
	}
	types := map[string]bool{}
	switch ty := schema["type"].(type) {
	case string:
		types[ty] = true
	case []any:
		for _, x := range ty {
			s, _ := x.(string)
			types[s] = true
		}
		if len(ty) != 2 || !types["null"] {
			errs = append(errs, fmt.Sprintf("%s: a type list must be [T, \"null\"]", path))
		}
	default:
		errs = append(errs, fmt.Sprintf("%s: missing type", path))
	}
	for ty := range types {
		switch ty {
		case "object", "string", "number", "integer", "boolean", "array", "null":
		default:
			errs = append(errs, fmt.Sprintf("%s: unknown type %q", path, ty))
		}
	}
	if types["object"] {
		if schema["additionalProperties"] != false {
			errs = append(errs, path+": additionalProperties must be false")
		}
		props, _ := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]any)
		reqSet := map[string]bool{}
		for _, r := range req {
			s, _ := r.(string)
			reqSet[s] = true
		}
		if len(reqSet) != len(props) || len(req) != len(props) {
			errs = append(errs, fmt.Sprintf("%s: required %v must list every property exactly once", path, req))
		}
		for name, p := range props {
			sub, ok := p.(map[string]any)
			if !ok {
				errs = append(errs, path+"."+name+": not a schema")
				continue
			}
			if !reqSet[name] {
				errs = append(errs, path+"."+name+": not required")
			}
			errs = append(errs, strictErrors(path+"."+name, sub)...)
		}
	}
	if types["array"] {
		items, _ := schema["items"].(map[string]any)
		errs = append(errs, strictErrors(path+"[]", items)...)
	}
	return errs
}

func TestSchemasStrict(t *testing.T) {
	m, _ := newMem(t, &Options{ToolPrefix: "team"})
	for _, sp := range m.Tools() {
		if errs := strictErrors(sp.Name, sp.InputSchema); len(errs) > 0 {
			t.Errorf("%s", strings.Join(errs, "\n"))
		}
		// The schema survives a JSON round trip (what adapters send).
		var back map[string]any
		if err := json.Unmarshal(mustJSON(t, sp.InputSchema), &back); err != nil {
			t.Fatal(err)
		}
		if errs := strictErrors(sp.Name, back); len(errs) > 0 {
			t.Errorf("round trip: %s", strings.Join(errs, "\n"))
		}
	}
	// The checker itself rejects the non-strict shapes.
	bad := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []any{}}
	if len(strictErrors("bad", bad)) < 2 {
		t.Fatal("checker accepted a non-strict schema")
	}
}

// Reference test 22: write semantics.
func TestWriteSemantics(t *testing.T) {
	m, s := newMem(t, nil)
	w1 := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- likes pip"}))
	w2 := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- uses Linux\n\n", "file": "MEMORY.md"}))
	w3 := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- likes uv", "old_text": "- likes pip"}))
	if w1.Status != "created" || w2.Status != "appended" || w3.Status != "updated" {
		t.Fatalf("statuses %s %s %s", w1.Status, w2.Status, w3.Status)
	}
	if w1.Version == "" || w1.Version == w2.Version || w2.Version == w3.Version || w1.Replayed || w1.File != "MEMORY.md" {
		t.Fatalf("versions %+v %+v %+v", w1, w2, w3)
	}
	if got := memtest.Content(t, s, "main/MEMORY.md"); got != "- likes uv\n- uses Linux\n" {
		t.Fatalf("content %q", got)
	}
	if b := string(mustJSON(t, w3)); strings.Contains(b, "uv") || strings.Contains(b, "Linux") {
		t.Fatalf("result carries content: %s", b)
	}
	// An empty replacement removes the passage.
	wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "", "old_text": "- uses Linux\n"}))
	if got := memtest.Content(t, s, "main/MEMORY.md"); got != "- likes uv\n" {
		t.Fatalf("after removal %q", got)
	}

	w := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "x", "file": " topic "}))
	if w.File != "topic.md" || memtest.Content(t, s, "main/topic.md") != "x\n" {
		t.Fatalf("topic: %+v", w)
	}
	if w := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "x", "file": "notes.txt"})); w.File != "notes.txt.md" {
		t.Fatalf("notes.txt -> %s", w.File)
	}
	if w := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "x", "file": strings.Repeat("a", 77)})); len(w.File) != 80 {
		t.Fatalf("80-char name: %s", w.File)
	}
	for _, bad := range []string{"../secret", strings.Repeat("a", 78), "a/b", "_x", "a..b", "", "  ", "ä.md"} {
		wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "x", "file": bad}), "is not a valid memory filename")
	}
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": " \n\t"}), "Nothing to write")

	memtest.Put(t, s, "main/dup.md", "a b a\n")
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "c", "file": "dup", "old_text": "a"}), "appears 2 times")
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "c", "file": "dup", "old_text": "zzz"}), "was not found")
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "c", "file": "dup", "old_text": ""}), "was not found")
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "c", "file": "nope", "old_text": "a"}), "no memory file")
	if got := memtest.Content(t, s, "main/dup.md"); got != "a b a\n" {
		t.Fatalf("edit errors changed the file: %q", got)
	}
	if got := memtest.Content(t, s, "main/nope.md"); got != "<absent>" {
		t.Fatal("edit of a missing file created it")
	}

	// Argument mistakes are tool errors too.
	for _, raw := range []string{`[]`, `{"content": 3}`, `{"file": "x"}`, `{"content": "x", "mode": "y"}`, `not json`} {
		if _, ok := call(t, m, inv(""), "write_memory", raw).(*ToolError); !ok {
			t.Fatalf("%s accepted", raw)
		}
	}
	if _, err := m.Call(t.Context(), inv(""), "drop_table", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("unknown tool: %v", err)
	}
}

// Reference test 23: limits and CAS retries.
func TestLimitsAndRetries(t *testing.T) {
	d := memtest.NewCounting()
	s := store.New(d, nil)
	m := mustNew(t, s, &Options{Limits: Limits{MaxMemorySize: 10}})

	d.Conflicts = 2
	wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "abc"}))
	if got := memtest.Content(t, s, "main/MEMORY.md"); got != "abc\n" {
		t.Fatalf("after 2 conflicts: %q", got)
	}
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "0123456789", "file": "big"}), "Split the content")

	d.Conflicts = MaxAttempts
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "def"}), "changed repeatedly")
	if got := memtest.Content(t, s, "main/MEMORY.md"); got != "abc\n" {
		t.Fatalf("after 16 conflicts: %q", got)
	}
	memtest.Put(t, s, "main/gone.md", "x")
	d.Conflicts = MaxAttempts
	wantToolErr(t, call(t, m, inv(""), "delete_memory", map[string]any{"file": "gone"}), "changed repeatedly")
	d.Conflicts = MaxAttempts - 1
	if r := call(t, m, inv(""), "delete_memory", map[string]any{"file": "gone"}).(*DeleteResult); r.Status != "deleted" {
		t.Fatalf("delete after 15 conflicts: %+v", r)
	}

	// An external file over MaxMemorySize: read shows a marked prefix,
	// append and edit refuse.
	memtest.Put(t, s, "main/huge.md", "0123456789ABCDEF")
	got := call(t, m, inv(""), "read_memory", map[string]any{"file": "huge.md"}).(string)
	if !strings.HasPrefix(got, "0123456789\n\n[Truncated:") {
		t.Fatalf("read = %q", got)
	}
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "x", "file": "huge"}), "partial content")
	wantToolErr(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "x", "file": "huge", "old_text": "0"}), "partial content")
	if got := memtest.Content(t, s, "main/huge.md"); got != "0123456789ABCDEF" {
		t.Fatalf("huge changed: %q", got)
	}
}

func TestConcurrentToolAppends(t *testing.T) {
	m, s := newMem(t, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			res, err := m.Call(t.Context(), inv("kamal"), "write_memory", mustJSON(t, map[string]any{"content": fmt.Sprintf("- fact %d", i)}))
			if _, ok := res.(*WriteResult); err != nil || !ok {
				t.Errorf("append %d: %v %#v", i, err, res)
			}
		})
	}
	wg.Wait()
	got := memtest.Content(t, s, "kamal/main/MEMORY.md")
	for i := range 8 {
		if strings.Count(got, fmt.Sprintf("- fact %d\n", i)) != 1 {
			t.Fatalf("fact %d not exactly once in %q", i, got)
		}
	}
}

// Reference test 24: idempotent tools.
func TestIdempotentTools(t *testing.T) {
	m, s := newMem(t, nil)
	in := inv("kamal")
	args := map[string]any{"content": "- hates early flights", "file": nil, "old_text": nil}
	first := wantWrite(t, call(t, m, in, "write_memory", args))
	again := wantWrite(t, call(t, m, in, "write_memory", args))
	if !again.Replayed || again.Version != first.Version || again.Status != first.Status || again.File != first.File {
		t.Fatalf("replay %+v vs %+v", again, first)
	}
	// Omitting file is the same call as file null.
	if r := wantWrite(t, call(t, m, in, "write_memory", map[string]any{"content": "- hates early flights"})); !r.Replayed {
		t.Fatal("omitted file is not the same call")
	}
	want := "- hates early flights\n"
	if got := memtest.Content(t, s, "kamal/main/MEMORY.md"); got != want {
		t.Fatalf("content %q", got)
	}
	_, err := m.Call(t.Context(), in, "write_memory", mustJSON(t, map[string]any{"content": "- loves early flights"}))
	if !errors.Is(err, store.ErrOperationConflict) || !strings.Contains(err.Error(), "different arguments") {
		t.Fatalf("changed args: %v", err)
	}
	if got := memtest.Content(t, s, "kamal/main/MEMORY.md"); got != want {
		t.Fatalf("content after conflict %q", got)
	}
	// The same ids in another namespace are another operation.
	other := in
	other.Namespace = "ana"
	if r := wantWrite(t, call(t, m, other, "write_memory", args)); r.Replayed {
		t.Fatal("replayed across namespaces")
	}
	for _, bad := range []Invocation{{RunID: "r"}, {ToolCallID: "c"}} {
		_, err := m.Call(t.Context(), bad, "write_memory", mustJSON(t, args))
		if !errors.Is(err, ErrMissingID) || !strings.Contains(err.Error(), "stable") {
			t.Fatalf("missing ids: %v", err)
		}
		_, err = m.Call(t.Context(), bad, "delete_memory", mustJSON(t, map[string]any{"file": "x"}))
		if !errors.Is(err, ErrMissingID) {
			t.Fatalf("delete missing ids: %v", err)
		}
	}
	wantToolErr(t, call(t, m, inv("kamal"), "delete_memory", map[string]any{"file": "MEMORY.md"}), "main notebook")
	wantToolErr(t, call(t, m, inv("kamal"), "delete_memory", map[string]any{"file": "MEMORY"}), "main notebook")

	din := inv("kamal")
	d1 := call(t, m, din, "delete_memory", map[string]any{"file": "missing"}).(*DeleteResult)
	d2 := call(t, m, din, "delete_memory", map[string]any{"file": "missing"}).(*DeleteResult)
	if d1.Status != "not_found" || d1.Replayed || d2.Status != "not_found" || !d2.Replayed {
		t.Fatalf("missing delete %+v then %+v", d1, d2)
	}
	memtest.Put(t, s, "kamal/main/trip.md", "Bangkok secret\n")
	d3 := call(t, m, inv("kamal"), "delete_memory", map[string]any{"file": "trip.md"}).(*DeleteResult)
	if b := string(mustJSON(t, d3)); d3.Status != "deleted" || strings.Contains(b, "Bangkok") || !strings.Contains(b, `"version":null`) {
		t.Fatalf("delete result %s", b)
	}
	if memtest.Content(t, s, "kamal/main/trip.md") != "<absent>" {
		t.Fatal("not deleted")
	}
}

// Reference test 25: search tool.
func TestSearchTool(t *testing.T) {
	// The reference notebook scores literally.
	m, s := newMem(t, &Options{SearchMode: search.Literal})
	memtest.Put(t, s, "tenant-a/main/alpha.md", "alpha alpha")
	memtest.Put(t, s, "tenant-a/main/beta.md", "alpha")
	memtest.Put(t, s, "tenant-a/main/nested/deep.md", "alpha alpha alpha")
	memtest.Put(t, s, "tenant-b/main/private.md", "alpha alpha alpha alpha")
	r := call(t, m, inv("tenant-a"), "search_memory", map[string]any{"query": "alpha"}).(*SearchResult)
	if len(r.Matches) != 2 || r.Matches[0].File != "alpha.md" || r.Matches[1].File != "beta.md" || r.Scanned != 2 || r.Truncated {
		t.Fatalf("search = %+v", r)
	}
	// The namespace and agent name never match.
	for _, q := range []string{"tenant-a", "main"} {
		if r := call(t, m, inv("tenant-a"), "search_memory", map[string]any{"query": q}).(*SearchResult); len(r.Matches) != 0 {
			t.Fatalf("%q matched %+v", q, r)
		}
	}
	// The hidden scope does not use the char budget.
	m14 := mustNew(t, s, &Options{SearchMode: search.Literal, Limits: Limits{MaxSearchResultChars: 14}})
	memtest.Put(t, s, "a-rather-long-tenant-name/main/topic.md", "needle")
	r = call(t, m14, inv("a-rather-long-tenant-name"), "search_memory", map[string]any{"query": "needle"}).(*SearchResult)
	if len(r.Matches) != 1 || r.Matches[0].File+r.Matches[0].Snippet != "topic.mdneedle" {
		t.Fatalf("budget: %+v", r)
	}

	wantToolErr(t, call(t, m, inv("tenant-a"), "search_memory", map[string]any{"query": " \t "}), "non-empty")
	long := strings.Repeat(" ", 500) + "x" + strings.Repeat(" ", 500)
	wantToolErr(t, call(t, m, inv("tenant-a"), "search_memory", map[string]any{"query": long}), "at most 1000 characters")
	var terms []string
	for i := range 33 {
		terms = append(terms, fmt.Sprintf("t%d", i))
	}
	wantToolErr(t, call(t, m, inv("tenant-a"), "search_memory", map[string]any{"query": strings.Join(terms, " ")}), "at most 32 unique terms")
	if q, te := normalizeQuery("  Alpha alpha BETA beta  "); te != nil || q != "Alpha BETA" {
		t.Fatalf("normalizeQuery = %q %v", q, te)
	}
	if q, te := normalizeQuery(strings.Repeat("x ", 40)); te != nil || q != "x" {
		t.Fatalf("repeated terms = %q %v", q, te)
	}
}

func TestSearchRebound(t *testing.T) {
	var matches []search.Match
	for i := range 5 {
		matches = append(matches, search.Match{Path: fmt.Sprintf("ns/main/topic-%d.md", i), Snippet: strings.Repeat("s", 100), Score: 1})
	}
	r := search.Result{Matches: matches, Scanned: 11}
	l := Limits{MaxSearchResults: 2, MaxSearchResultChars: 25, MaxSearchFiles: 1}
	out, _, err := boundSearch(r, "ns/main/", l)
	if err != nil || len(out.Matches) != 1 || notes.Runes(out.Matches[0].File+out.Matches[0].Snippet) != 25 || out.Scanned != 11 || !out.Truncated {
		t.Fatalf("rebound = %+v, %v", out, err)
	}
	l.MaxSearchResultChars = 5
	if out, _, _ := boundSearch(r, "ns/main/", l); len(out.Matches) != 0 || !out.Truncated {
		t.Fatalf("tiny budget = %+v", out)
	}
	r.Matches = []search.Match{{Path: "other/main/x.md"}}
	if _, _, err := boundSearch(r, "ns/main/", l); !errors.Is(err, ErrScope) || !strings.Contains(err.Error(), "outside the requested scope") {
		t.Fatalf("out of scope: %v", err)
	}
	r.Matches = []search.Match{{Path: "ns/main/deeper/x.md"}}
	if _, _, err := boundSearch(r, "ns/main/", l); !errors.Is(err, ErrScope) || !strings.Contains(err.Error(), "nested result") {
		t.Fatalf("nested: %v", err)
	}
}

func TestReadTool(t *testing.T) {
	m, s := newMem(t, nil)
	memtest.Put(t, s, "kamal/main/MEMORY.md", "- lives in Hanoi\n")
	if got := call(t, m, inv("kamal"), "read_memory", map[string]any{"file": "MEMORY.md"}); got != "- lives in Hanoi\n" {
		t.Fatalf("read = %#v", got)
	}
	wantToolErr(t, call(t, m, inv("ana"), "read_memory", map[string]any{"file": "MEMORY.md"}), "no memory file")
	wantToolErr(t, call(t, m, inv("kamal"), "read_memory", map[string]any{"file": "../kamal"}), "is not a valid memory filename")
}

func TestPathEscapeIsToolError(t *testing.T) {
	d := memtest.NewCounting()
	m := mustNew(t, store.New(d, nil), nil)
	d.Escape = true
	for _, c := range []struct{ tool, args string }{
		{"write_memory", `{"content":"x"}`},
		{"read_memory", `{"file":"x"}`},
		{"delete_memory", `{"file":"x"}`},
	} {
		wantToolErr(t, call(t, m, inv(""), c.tool, c.args), "outside the store directory")
	}
}

// beforeRead runs hook (once) when the store first reads a file, before
// the read reaches the driver.
type beforeRead struct {
	driver.Driver
	once sync.Once
	hook func()
}

func (d *beforeRead) GetFile(ctx context.Context, path string) (*driver.File, error) {
	d.once.Do(d.hook)
	return d.Driver.GetFile(ctx, path)
}

func TestReplayRacingTheOriginalReturnsItsResult(t *testing.T) {
	// The replay's receipt check runs before the original lands and its
	// read just after: it must still return the original's result, field
	// for field, not a status made up from what it read.
	for _, tc := range []struct {
		name string
		seed string // MEMORY.md before the call ("" = absent)
		args map[string]any
	}{
		{"create", "", map[string]any{"content": "- likes tea"}},
		{"append", "- a\n", map[string]any{"content": "- likes tea"}},
		{"update", "- a\n", map[string]any{"content": "- b", "old_text": "- a"}},
	} {
		for _, atomicPath := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/atomic=%v", tc.name, atomicPath), func(t *testing.T) {
				d := memtest.NewDriver(t)
				s := store.New(d, nil)
				if tc.seed != "" {
					memtest.Put(t, s, "main/MEMORY.md", tc.seed)
				}
				in := inv("")
				var first *WriteResult
				// The nine primitives, with the original run just before the
				// replay's first read.
				var racing driver.Driver = &beforeRead{Driver: struct{ driver.Driver }{d}, hook: func() {
					first = wantWrite(t, call(t, mustNew(t, s, nil), in, "write_memory", tc.args))
				}}
				if atomicPath {
					racing = atomicDriver{racing, d}
				}
				rs := store.New(racing, nil)
				if rs.Capabilities().AtomicMutation != atomicPath {
					t.Fatalf("capabilities %+v", rs.Capabilities())
				}
				replay := wantWrite(t, call(t, mustNew(t, rs, nil), in, "write_memory", tc.args))
				if first == nil || first.Replayed {
					t.Fatalf("the original did not run first: %+v", first)
				}
				want := *first
				want.Replayed = true
				if *replay != want {
					t.Fatalf("replay = %+v, want the original %+v", *replay, *first)
				}
			})
		}
	}
}

// atomicDriver offers the inner driver's atomic mutation beside a wrapper.
type atomicDriver struct {
	driver.Driver
	m driver.Mutator
}

func (a atomicDriver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	return a.m.Mutate(ctx, p)
}
