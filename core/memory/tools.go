package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/agentmem/agentmem/core/search"
)

// ToolSpec describes one tool to a framework.
type ToolSpec struct {
	// Name is the tool name the model calls (with the ToolPrefix, if any).
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the arguments, valid under OpenAI
	// strict mode (every property required, no additional properties,
	// optional values typed ["string", "null"]) and accepted by Gemini.
	// An optional argument is one typed ["string", "null"]: [Memory.Call]
	// takes a null and a missing one alike as no value, so a framework
	// without strict mode may leave it out of required (package mcp
	// does, since MCP clients send every required argument).
	// Each call of [Memory.Tools] returns a fresh copy.
	InputSchema map[string]any
}

// The four tools, without prefix.
const (
	WriteTool  = "write_memory"
	ReadTool   = "read_memory"
	DeleteTool = "delete_memory"
	SearchTool = "search_memory"
)

type toolNames struct{ write, read, delete, search string }

func newToolNames(prefix string) toolNames {
	p := ""
	if prefix != "" {
		p = prefix + "_"
	}
	return toolNames{p + WriteTool, p + ReadTool, p + DeleteTool, p + SearchTool}
}

// Tools returns the four tool specs, in the order write_memory,
// read_memory, delete_memory, search_memory.
func (m *Memory) Tools() []ToolSpec {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	nullable := func(desc string) map[string]any {
		return map[string]any{"type": []any{"string", "null"}, "description": desc}
	}
	object := func(props map[string]any) map[string]any {
		req := make([]any, 0, len(props))
		for _, k := range slices.Sorted(maps.Keys(props)) {
			req = append(req, k)
		}
		return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
	}
	n := m.names
	return []ToolSpec{
		{
			Name: n.write,
			Description: "Write persistent memory by appending or by replacing one exact passage. " +
				"Leave old_text null to append to the file, creating it when needed. Pass old_text to replace " +
				"exactly one matching passage with content; an empty content removes that passage. " +
				"Keep short durable facts in " + MainFile + " and longer or evolving topics in separate files. " +
				"Update stale entries instead of adding contradictory duplicates. " +
				"Give a file that stops being true at a known time (a trip, this week's goal) an expiry: " +
				"it is then forgotten on its own.",
			InputSchema: object(map[string]any{
				"content":  str("Text to append, or the replacement for old_text."),
				"file":     nullable("Memory file name such as " + MainFile + " or travel.md; null means " + MainFile + "."),
				"old_text": nullable("Exact passage to replace, which must occur exactly once; null appends."),
				"expires": nullable("When the whole file stops being true and is forgotten: a duration from now " +
					"(7d, 12h), a date (2026-12-31, kept through that day), or \"never\" to remove an expiry; " +
					"null keeps the file's expiry. " + MainFile + " and pinned files never expire."),
			}),
		},
		{
			Name: n.read,
			Description: "Read a bounded prefix of one memory file. Memory may be stale background context, " +
				"so verify volatile facts before relying on them.",
			InputSchema: object(map[string]any{
				"file": str("Memory file name, as listed in the memory block or returned by " + n.search + "."),
			}),
		},
		{
			Name: n.delete,
			Description: "Delete a memory file that is no longer useful. " + MainFile + " cannot be deleted; " +
				"correct or remove its text with " + n.write + " instead.",
			InputSchema: object(map[string]any{
				"file": str("Memory file name to delete."),
			}),
		},
		{
			Name:        n.search,
			Description: m.searchDescription(),
			InputSchema: object(map[string]any{
				"query": str("Words to look for (at most 1000 characters and 32 distinct words)."),
			}),
		},
	}
}

// searchDescription describes search_memory for the mode the tool ranks
// in: literal scoring counts the query's words; the default modes also
// match other forms of them and related words (and meaning, hybrid).
func (m *Memory) searchDescription() string {
	if m.mode == search.Literal {
		return "Search the memory files of the current user for words. Returns bounded snippets; " +
			"read a file when a larger excerpt is relevant."
	}
	return "Search the memory files of the current user. Files are ranked by how well they match the query, " +
		"counting other forms of its words and related words too, so a short question or a few words naming " +
		"the topic work. Returns bounded snippets, best first; read a file when a larger excerpt is relevant. " +
		"No matches means no file is about the query; related files, when listed, are only close in meaning."
}

// Call runs one tool call. tool is the tool's name as the model called it
// (with the prefix, if any) and args the model's JSON arguments.
//
// The result is one of [*WriteResult], [*DeleteResult], a string (the
// content read by read_memory), [*SearchResult] or [*ToolError] (a mistake
// the model can fix; show it to the model like any result). All encode
// with encoding/json.
//
// The error is non-nil only for what the model cannot fix; see the package
// doc. Pass it through [Redact] before a model may see it.
func (m *Memory) Call(ctx context.Context, inv Invocation, tool string, args json.RawMessage) (any, error) {
	var keys []string
	switch tool {
	case m.names.write:
		keys = writeKeys
	case m.names.read, m.names.delete:
		keys = []string{"file"}
	case m.names.search:
		keys = []string{"query"}
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownTool, tool)
	}
	a, te := decodeArgs(args, keys)
	if te != nil {
		return te, nil
	}
	switch tool {
	case m.names.write:
		return m.write(ctx, inv, a["content"], a["file"], a["old_text"], a["expires"])
	case m.names.read:
		return m.read(ctx, inv, *a["file"])
	case m.names.delete:
		return m.delete(ctx, inv, *a["file"])
	default:
		return m.search(ctx, inv, *a["query"])
	}
}

// writeKeys are write_memory's arguments, the required one first.
var writeKeys = []string{"content", "file", "old_text", "expires"}

// decodeArgs decodes the model's arguments strictly: a JSON object whose
// keys are among keys, each value a string or null; keys[0] is required
// and must be a string. Missing keys are nil. Any mistake is a *ToolError
// the model can fix.
func decodeArgs(raw json.RawMessage, keys []string) (map[string]*string, *ToolError) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, toolErr("Invalid arguments: pass a JSON object with string values.")
	}
	out := make(map[string]*string, len(keys))
	for k, v := range obj {
		if !slices.Contains(keys, k) {
			return nil, toolErr(fmt.Sprintf("Invalid arguments: unexpected argument %q; the arguments are %v.", k, keys))
		}
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, toolErr(fmt.Sprintf("Invalid arguments: %s must be a string.", k))
		}
		out[k] = &s
	}
	if out[keys[0]] == nil {
		return nil, toolErr(fmt.Sprintf("Invalid arguments: %s is required and must be a string.", keys[0]))
	}
	return out, nil
}
