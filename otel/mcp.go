package otel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of MCP server spans (MCP semantic conventions,
// development status).
const (
	// KeyMCPMethod is the JSON-RPC method of the message.
	KeyMCPMethod = attribute.Key("mcp.method.name")
	// KeyMCPSession is the MCP session id (streamable HTTP only).
	KeyMCPSession = attribute.Key("mcp.session.id")
	// KeyMCPProtocolVersion is the session's MCP protocol version.
	KeyMCPProtocolVersion = attribute.Key("mcp.protocol.version")
	// KeyJSONRPCRequestID is the JSON-RPC id of a request.
	KeyJSONRPCRequestID = attribute.Key("jsonrpc.request.id")
	// KeyGenAIToolName is the tool of a tools/call.
	KeyGenAIToolName = attribute.Key("gen_ai.tool.name")
	// KeyGenAIPromptName is the prompt of a prompts/get.
	KeyGenAIPromptName = attribute.Key("gen_ai.prompt.name")
	// KeyRPCResponseStatusCode is the JSON-RPC error code of a request
	// answered with an error.
	KeyRPCResponseStatusCode = attribute.Key("rpc.response.status_code")
)

// MCPRequest describes one message an MCP server received. It is the
// same type as mcp.RequestInfo of module github.com/agentmem/agentmem/mcp
// (both are aliases of one struct type of standard types), so that
// [MCPObserver] plugs into mcp.Options.Observe while this module does not
// depend on the MCP SDK.
type MCPRequest = struct {
	// Method is the JSON-RPC method: "tools/call", "resources/read",
	// "notifications/initialized", …
	Method string
	// ToolName is the tool of a tools/call; PromptName the prompt of a
	// prompts/get.
	ToolName, PromptName string
	// SessionID is the MCP session id (Mcp-Session-Id) over streamable
	// HTTP; empty over stdio and other transports without one.
	SessionID string
	// RequestID is the JSON-RPC id of a request, as text ("7", "abc");
	// empty for a notification, and for requests not served through
	// the mcp package's Server.Run, Server.Connect or Server.Handler.
	RequestID string
	// ProtocolVersion is the MCP protocol version of the session.
	ProtocolVersion string
	// Meta is the request's params._meta as the client sent it (W3C trace
	// context travels there as "traceparent" and "tracestate"); nil when
	// absent. It is a copy.
	Meta map[string]any
}

// MCPObserver returns a function for mcp.Options.Observe that makes one
// SERVER span per MCP message, following the MCP semantic conventions:
// named "{mcp.method.name} {target}" (the tool or prompt name, when there
// is one: "tools/call write_memory"), with mcp.method.name,
// gen_ai.tool.name and gen_ai.operation.name = execute_tool for tools/call,
// gen_ai.prompt.name for prompts/get, mcp.session.id, jsonrpc.request.id and
// mcp.protocol.version when known. A tool call whose result is an error
// gets error.type = tool_error; a request answered with a JSON-RPC error,
// error.type and rpc.response.status_code = its code; another failure,
// error.type = _OTHER; each with an Error status (no message: messages may
// quote content).
//
// The parent is the W3C trace context the client put in params._meta
// ("traceparent", "tracestate"); without one, the span in ctx (such as an
// HTTP server span), which otherwise becomes a link. The notebook's and
// the backend's spans of the request ([NewTracer], [WrapDriver]) are
// children of the MCP span. No argument, result, resource URI or user id
// is recorded.
//
// opts.TracerProvider is used; the other fields do not apply.
func MCPObserver(opts *Options) func(ctx context.Context, r MCPRequest) (context.Context, func(error)) {
	in := newInstruments(opts)
	tc := propagation.TraceContext{}
	return func(ctx context.Context, r MCPRequest) (context.Context, func(error)) {
		name := r.Method
		attrs := make([]attribute.KeyValue, 0, 6)
		attrs = append(attrs, KeyMCPMethod.String(r.Method))
		switch {
		case r.ToolName != "":
			name += " " + r.ToolName
			attrs = append(attrs, KeyGenAIToolName.String(r.ToolName))
			if r.Method == "tools/call" {
				attrs = append(attrs, KeyGenAIOperation.String("execute_tool"))
			}
		case r.PromptName != "":
			name += " " + r.PromptName
			attrs = append(attrs, KeyGenAIPromptName.String(r.PromptName))
		}
		if r.SessionID != "" {
			attrs = append(attrs, KeyMCPSession.String(r.SessionID))
		}
		if r.RequestID != "" {
			attrs = append(attrs, KeyJSONRPCRequestID.String(r.RequestID))
		}
		if r.ProtocolVersion != "" {
			attrs = append(attrs, KeyMCPProtocolVersion.String(r.ProtocolVersion))
		}
		start := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...)}
		parent := ctx
		if carrier := metaCarrier(r.Meta); carrier != nil {
			// Extract into a context without a span, so that only the
			// carrier's trace context can come out valid.
			bare := trace.ContextWithSpanContext(ctx, trace.SpanContext{})
			if remote := trace.SpanContextFromContext(tc.Extract(bare, carrier)); remote.IsValid() {
				if local := trace.SpanContextFromContext(ctx); local.IsValid() {
					start = append(start, trace.WithLinks(trace.Link{SpanContext: local}))
				}
				parent = trace.ContextWithRemoteSpanContext(ctx, remote)
			}
		}
		ctx, sp := in.tracer.Start(parent, name, start...)
		return ctx, func(err error) {
			if err != nil {
				kind := "_OTHER"
				var typed interface{ ErrorType() string }
				if errors.As(err, &typed) {
					kind = typed.ErrorType()
					if kind != "tool_error" {
						sp.SetAttributes(KeyRPCResponseStatusCode.String(kind))
					}
				}
				sp.SetAttributes(KeyErrorType.String(kind))
				sp.SetStatus(codes.Error, kind)
			}
			sp.End()
		}
	}
}

// metaCarrier returns the trace context entries of _meta as a carrier, or
// nil when there are none.
func metaCarrier(meta map[string]any) propagation.MapCarrier {
	var c propagation.MapCarrier
	for _, k := range []string{"traceparent", "tracestate"} {
		if v, ok := meta[k].(string); ok && v != "" {
			if c == nil {
				c = propagation.MapCarrier{}
			}
			c[k] = v
		}
	}
	return c
}
