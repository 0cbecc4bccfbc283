package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// messagesAPI is a local server that speaks the Messages API as
// documented: POST /v1/messages with the key (header x-api-key, or
// Authorization: Bearer, which SDK v2 sends), the header
// anthropic-version (a date) and a JSON body with model, max_tokens (>= 1) and
// messages (user first, each with a role and a string or a list of typed
// blocks; system a string or a list of text blocks). A request that is
// not so is answered 400 invalid_request_error, as the API does, and
// fails the test. Otherwise it answers the message of content and stop,
// or, with status set, the error shape of the API (type error, an error
// with type and message, request_id; the request-id header).
type messagesAPI struct {
	t       *testing.T
	content []map[string]any
	stop    string
	status  int
	errType string
	errMsg  string

	mu   sync.Mutex
	reqs []map[string]any
}

var apiVersion = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func (m *messagesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.reqs) + 1
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", fmt.Sprintf("req_%d", n))
	fail := func(status int, typ, msg string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error",
			"error": map[string]any{"type": typ, "message": msg}, "request_id": fmt.Sprintf("req_%d", n)})
	}
	var body map[string]any
	problem := ""
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		problem = r.Method + " " + r.URL.Path + ": want POST /v1/messages"
	case r.Header.Get("x-api-key") != "test-key" && r.Header.Get("Authorization") != "Bearer test-key":
		// The key as x-api-key, or (as this SDK sends it) a bearer token.
		fail(http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		m.t.Errorf("x-api-key %q, Authorization %q", r.Header.Get("x-api-key"), r.Header.Get("Authorization"))
		return
	case !apiVersion.MatchString(r.Header.Get("anthropic-version")):
		problem = "anthropic-version " + r.Header.Get("anthropic-version") + ": want a version date"
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		problem = "Content-Type " + r.Header.Get("Content-Type")
	default:
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			problem = "body: " + err.Error()
		} else {
			problem = checkMessagesBody(body)
		}
	}
	if problem != "" {
		m.t.Errorf("request %d: %s", n, problem)
		fail(http.StatusBadRequest, "invalid_request_error", problem)
		return
	}
	m.reqs = append(m.reqs, body)
	if m.status != 0 {
		fail(m.status, m.errType, m.errMsg)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
		"content": m.content, "stop_reason": m.stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 120, "output_tokens": 30},
	})
}

// checkMessagesBody returns what is wrong with a Messages API request body,
// "" when nothing.
func checkMessagesBody(b map[string]any) string {
	if m, _ := b["model"].(string); m == "" {
		return "model: want a model name"
	}
	if mt, ok := b["max_tokens"].(float64); !ok || mt < 1 || mt != float64(int64(mt)) {
		return fmt.Sprintf("max_tokens %v: want an integer >= 1", b["max_tokens"])
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) == 0 {
		return "messages: want at least one"
	}
	for i, raw := range msgs {
		msg, _ := raw.(map[string]any)
		role, _ := msg["role"].(string)
		if role != "user" && role != "assistant" || i == 0 && role != "user" {
			return fmt.Sprintf("messages.%d.role %q", i, role)
		}
		if p := checkContent(msg["content"], false); p != "" {
			return fmt.Sprintf("messages.%d.content: %s", i, p)
		}
	}
	if sys, ok := b["system"]; ok {
		if p := checkContent(sys, true); p != "" {
			return "system: " + p
		}
	}
	return ""
}

// checkContent checks a string or a list of typed blocks (only text ones
// when textOnly).
func checkContent(c any, textOnly bool) string {
	if _, ok := c.(string); ok {
		return ""
	}
	blocks, ok := c.([]any)
	if !ok || len(blocks) == 0 {
		return "want a string or a list of blocks"
	}
	for i, raw := range blocks {
		b, _ := raw.(map[string]any)
		typ, _ := b["type"].(string)
		switch {
		case typ == "":
			return fmt.Sprintf("%d.type missing", i)
		case typ == "text":
			if _, ok := b["text"].(string); !ok {
				return fmt.Sprintf("%d.text missing", i)
			}
		case textOnly:
			return fmt.Sprintf("%d.type %q: want text", i, typ)
		}
	}
	return ""
}

// modelOn returns Model on a client of srv, with retries off (the SDK
// retries 429, 5xx and 529 twice by default, after a backoff).
func modelOn(srv *httptest.Server) pruned.Model {
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return Model(&client.Messages, "claude-sonnet-4-5")
}

func TestModelAnswers(t *testing.T) {
	api := &messagesAPI{t: t, stop: "end_turn", content: []map[string]any{
		{"type": "text", "text": `{"edits": [`}, {"type": "text", "text": `]}`}}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	m := modelOn(srv)
	resp, err := m.Generate(t.Context(), pruned.ModelRequest{System: "You consolidate notes.", User: "<notebook>…</notebook>"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"edits": []}` || resp.Model != "claude-sonnet-4-5-20250929" || resp.Usage != (pruned.Usage{InputTokens: 120, OutputTokens: 30}) {
		t.Fatalf("Generate = %+v", resp)
	}
	if _, err := m.Generate(t.Context(), pruned.ModelRequest{System: "s", User: "u", MaxOutputTokens: 512}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"max_tokens":4096,"messages":[{"content":[{"text":"\u003cnotebook\u003e…\u003c/notebook\u003e","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-5","system":[{"text":"You consolidate notes.","type":"text"}]}`,
		`{"max_tokens":512,"messages":[{"content":[{"text":"u","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-5","system":[{"text":"s","type":"text"}]}`,
	}
	if len(api.reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(api.reqs), len(want))
	}
	for i, req := range api.reqs {
		if b, _ := json.Marshal(req); string(b) != want[i] {
			t.Errorf("request %d:\n%s\nwant\n%s", i+1, b, want[i])
		}
	}
}

// TestModelNeedsText: an answer of tool_use blocks only (no tool was
// offered) or one cut at max_tokens is ErrAnswer, with the usage kept.
func TestModelNeedsText(t *testing.T) {
	for _, c := range []struct {
		name, stop string
		content    []map[string]any
		want       string
	}{
		{"tool_use", "tool_use", []map[string]any{{"type": "tool_use", "id": "toolu_1", "name": "memory", "input": map[string]any{"command": "view"}}},
			`claude-sonnet-4-5-20250929 answered no text (stop reason "tool_use", content [tool_use]): consolidation needs the edits as text`},
		{"max_tokens", "max_tokens", []map[string]any{{"type": "text", "text": `{"edits": [{"file": "MEM`}},
			"claude-sonnet-4-5-20250929's answer was cut at max_tokens (4096): raise the answer bound"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(&messagesAPI{t: t, stop: c.stop, content: c.content})
			defer srv.Close()
			resp, err := modelOn(srv).Generate(t.Context(), pruned.ModelRequest{System: "s", User: "u"})
			if !errors.Is(err, ErrAnswer) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Generate error %v, want ErrAnswer saying %q", err, c.want)
			}
			if resp.Text != "" || resp.Usage.OutputTokens != 30 {
				t.Fatalf("Generate = %+v, want no text and the usage", resp)
			}
		})
	}
}

// TestModelAPIErrors: an error of the API says its status, type, message
// and request id and whether to try again, and unwraps to *sdk.Error.
func TestModelAPIErrors(t *testing.T) {
	for _, c := range []struct {
		status        int
		typ, msg, say string
	}{
		{529, "overloaded_error", "Overloaded",
			"anthropic: the Messages API (model claude-sonnet-4-5) answered 529 overloaded_error: Overloaded (request req_1): try again later"},
		{400, "invalid_request_error", "max_tokens: 4096 > 2048, which is the maximum allowed for this model",
			"anthropic: the Messages API (model claude-sonnet-4-5) answered 400 invalid_request_error: max_tokens: 4096 > 2048, which is the maximum allowed for this model (request req_1): fix the request or the API key"},
	} {
		t.Run(c.typ, func(t *testing.T) {
			srv := httptest.NewServer(&messagesAPI{t: t, status: c.status, errType: c.typ, errMsg: c.msg})
			defer srv.Close()
			_, err := modelOn(srv).Generate(t.Context(), pruned.ModelRequest{System: "s", User: "u"})
			var apiErr *sdk.Error
			if err == nil || err.Error() != c.say || !errors.As(err, &apiErr) || apiErr.StatusCode != c.status {
				t.Fatalf("Generate error %v (%T), want %q wrapping *sdk.Error %d", err, err, c.say, c.status)
			}
		})
	}
}

// TestModelUnreachable: no server at all is an error naming the model.
func TestModelUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err := modelOn(srv).Generate(t.Context(), pruned.ModelRequest{System: "s", User: "u"})
	if err == nil || !strings.HasPrefix(err.Error(), "anthropic: the Messages API (model claude-sonnet-4-5) did not answer: ") {
		t.Fatalf("Generate error %v", err)
	}
}
