package mcp

import (
	"context"
	"errors"
	"reflect"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequestInfo describes one MCP message the server received, for
// [Options.Observe]. It carries no content: no arguments, no results, no
// user id.
//
// It is an alias of a struct type made of standard types only, so that a
// package that does not import this one (agentmem's otel module, which
// must not pull in the MCP SDK) can declare the identical type and offer
// a function assignable to Options.Observe. Fields are only ever added
// together with such packages.
type RequestInfo = struct {
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
	// [Server.Run], [Server.Connect] or [Server.Handler].
	RequestID string
	// ProtocolVersion is the MCP protocol version of the session.
	ProtocolVersion string
	// Meta is the request's params._meta as the client sent it (W3C trace
	// context travels there as "traceparent" and "tracestate"); nil when
	// absent. It is a copy.
	Meta map[string]any
}

// ErrToolResult is what the end function of [Options.Observe] receives
// for a tools/call that succeeded as a request but whose result is a tool
// error (IsError). Its ErrorType method answers "tool_error", the MCP
// semantic conventions' error.type.
var ErrToolResult error = toolResultError{}

type toolResultError struct{}

func (toolResultError) Error() string     { return "mcp: the tool returned an error result" }
func (toolResultError) ErrorType() string { return "tool_error" }

// rpcError is a JSON-RPC error answered to a request; ErrorType is its
// code as text, the MCP semantic conventions' error.type.
type rpcError struct {
	err  error
	code int64
}

func (e rpcError) Error() string     { return e.err.Error() }
func (e rpcError) Unwrap() error     { return e.err }
func (e rpcError) ErrorType() string { return strconv.FormatInt(e.code, 10) }

// metaJSONRPCID is the _meta key under which this package stamps each
// request with its JSON-RPC id while an Observe hook is set (the SDK keeps
// the id to itself). It is removed from RequestInfo.Meta.
const metaJSONRPCID = "agentmem/jsonrpc-id"

// observe is the outermost receiving middleware when Options.Observe is
// set: it reports each message received and its outcome.
func (s *Server) observe(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		info := RequestInfo{Method: method}
		if ss, ok := req.GetSession().(*mcpsdk.ServerSession); ok && ss != nil {
			info.SessionID = ss.ID()
			if ip := ss.InitializeParams(); ip != nil {
				info.ProtocolVersion = ip.ProtocolVersion
			}
		}
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
			for k, v := range p.GetMeta() {
				switch {
				case k == metaJSONRPCID:
					info.RequestID, _ = v.(string)
				case k == metaRequestID:
				default:
					if info.Meta == nil {
						info.Meta = map[string]any{}
					}
					info.Meta[k] = v
				}
			}
			switch p := p.(type) {
			case *mcpsdk.CallToolParamsRaw:
				info.ToolName = p.Name
			case *mcpsdk.GetPromptParams:
				info.PromptName = p.Name
			case *mcpsdk.InitializeParams:
				info.ProtocolVersion = p.ProtocolVersion
			}
		}
		octx, end := s.opts.Observe(ctx, info)
		if octx != nil {
			ctx = octx
		}
		if end == nil {
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		var wire *jsonrpc.Error
		switch {
		case err != nil && errors.As(err, &wire):
			end(rpcError{err, wire.Code})
		case err != nil:
			end(err)
		default:
			if r, ok := res.(*mcpsdk.CallToolResult); ok && r != nil && r.IsError {
				end(ErrToolResult)
			} else {
				end(nil)
			}
		}
		return res, err
	}
}
