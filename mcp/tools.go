package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
)

// annotations returns the hints of one tool. read_memory and search_memory
// only read. delete_memory is destructive and idempotent (a second delete
// finds nothing). write_memory is destructive too: with old_text it
// replaces or removes a passage, which is more than an additive update in
// the MCP sense; and it is not idempotent (each append appends).
func annotations(name string, specs []memory.ToolSpec) *mcpsdk.ToolAnnotations {
	no, yes := false, true
	a := &mcpsdk.ToolAnnotations{OpenWorldHint: &no}
	switch name {
	case specs[0].Name: // write
		a.Title, a.DestructiveHint = "Write memory", &yes
	case specs[1].Name: // read
		a.Title, a.ReadOnlyHint = "Read memory", true
	case specs[2].Name: // delete
		a.Title, a.DestructiveHint, a.IdempotentHint = "Delete memory file", &yes, true
	default: // search
		a.Title, a.ReadOnlyHint = "Search memory", true
	}
	return a
}

// callTool returns the handler of one notebook tool.
func (s *Server) callTool(name string, specs []memory.ToolSpec) mcpsdk.ToolHandler {
	mutates := name == specs[0].Name || name == specs[2].Name
	return func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		c, err := s.resolve(ctx, req)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		run, call, te := invocationIDs(req)
		if te != nil {
			return toolResult(te, true)
		}
		inv := c.inv()
		inv.RunID, inv.ToolCallID = run, call
		if mutates {
			inv.Metadata = who(c, req)
		}
		res, err := s.mem.Call(ctx, inv, name, req.Params.Arguments)
		if err != nil {
			return toolResult(&memory.ToolError{Message: s.fail(ctx, err).Error()}, true)
		}
		if mutates {
			s.changed(ctx, c.scope, res)
		}
		_, isErr := res.(*memory.ToolError)
		return toolResult(res, isErr)
	}
}

// MaxWhoChars bounds each of the user id and the client name a write
// records ([memory.UpdatedByKey], [memory.ClientKey]), in characters; a
// longer one is cut.
const MaxWhoChars = 256

// who is the metadata of a write or delete of c: the user that made it
// and, when the client named itself in its initialize request
// (clientInfo.name), the client; without control characters (the store
// refuses NUL) and each cut to MaxWhoChars.
func who(c caller, req *mcpsdk.CallToolRequest) map[string]string {
	md := map[string]string{memory.UpdatedByKey: clean(c.user)}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			if name := clean(p.ClientInfo.Name); name != "" {
				md[memory.ClientKey] = name
			}
		}
	}
	return md
}

// clean drops the control characters of s and cuts it to MaxWhoChars.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s, _ = driver.CutRunes(s, MaxWhoChars)
	return s
}

// toolResult encodes a notebook result as structured content (an object:
// read_memory's text becomes {"result": text}, as in the ADK adapter) and
// as the same JSON in a text content, for clients that ignore structured
// content.
func toolResult(res any, isErr bool) (*mcpsdk.CallToolResult, error) {
	if text, ok := res.(string); ok {
		res = map[string]string{"result": text}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &mcpsdk.CallToolResult{
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           isErr,
	}, nil
}
