package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
)

// MetaIdempotencyKey is the key, in a tools/call request's _meta, of a
// client-supplied idempotency key. When present it wins over the request
// id: the call is applied once per (user, key), across sessions and server
// restarts, as long as the store keeps its receipts. Reusing a key with
// other arguments is refused.
const MetaIdempotencyKey = "agentmem/idempotency-key"

// MaxIdempotencyKey bounds the length of an idempotency key, in bytes.
const MaxIdempotencyKey = 256

// metaRequestID is the _meta key under which this package stamps a
// tools/call request with "<session>|<JSON-RPC id>" as it arrives. A value
// sent by the client under this key is overwritten.
const metaRequestID = "agentmem/request-id"

// invocationIDs returns the run id and tool-call id of a tools/call:
// the client's idempotency key when given, else the stamped session and
// request id, else (a request that did not come through this package's
// transports) a fresh id, so that the call is applied, but a re-sent
// request is not recognised.
func invocationIDs(req *mcpsdk.CallToolRequest) (run, call string, te *memory.ToolError) {
	meta := req.Params.Meta
	if v, ok := meta[MetaIdempotencyKey]; ok {
		key, isString := v.(string)
		if !isString || key == "" || len(key) > MaxIdempotencyKey {
			return "", "", &memory.ToolError{Message: fmt.Sprintf(
				"Invalid _meta: %s must be a string of 1-%d bytes.", MetaIdempotencyKey, MaxIdempotencyKey)}
		}
		return "mcp-idempotency-key", key, nil
	}
	if id, ok := meta[metaRequestID].(string); ok && id != "" {
		return "mcp-request", id, nil
	}
	return "mcp-unkeyed", rand.Text(), nil
}

// withRequestIDs wraps a transport so that each tools/call request read
// from it carries its connection and JSON-RPC id in _meta. The connection
// part is random per connection (stdio and in-memory connections have no
// session id), so two connections, or two runs of a stdio server, never
// share an id.
// It also counts, in replies, the requests read whose response is not
// written yet, for Shutdown.
func withRequestIDs(t mcpsdk.Transport, ids bool, replies *inflight) mcpsdk.Transport {
	return &idTransport{t, ids, replies}
}

type idTransport struct {
	mcpsdk.Transport
	ids     bool // stamp every request's JSON-RPC id too
	replies *inflight
}

func (t *idTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &idConn{Connection: c, session: "conn:" + rand.Text(), ids: t.ids, replies: t.replies}, nil
}

type idConn struct {
	mcpsdk.Connection
	session string
	ids     bool
	replies *inflight

	mu      sync.Mutex
	pending int // requests read, not yet answered
}

func (c *idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		stamp(msg, c.session, c.ids)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending++
			c.replies.hold()
			c.mu.Unlock()
		}
	}
	return msg, err
}

// Write writes msg; a response counts one request answered.
func (c *idConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.pending > 0 {
			c.pending--
			c.replies.leave()
		}
		c.mu.Unlock()
	}
	return err
}

// Close closes the connection: its requests will not be answered.
func (c *idConn) Close() error {
	err := c.Connection.Close()
	c.mu.Lock()
	for ; c.pending > 0; c.pending-- {
		c.replies.leave()
	}
	c.mu.Unlock()
	return err
}

// stamp puts "<session>|<id>" under metaRequestID in the _meta of a
// tools/call request and, when ids is set, the JSON-RPC id of any request
// under metaJSONRPCID (for Options.Observe). Params that are not a JSON
// object are left for the SDK to refuse.
func stamp(msg jsonrpc.Message, session string, ids bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	if ids {
		stampID(req)
	}
	if req.Method == "tools/call" {
		setMeta(req, metaRequestID, fmt.Sprintf("%s|%T:%v", session, req.ID.Raw(), req.ID.Raw()))
	}
}

// setMeta sets _meta[key] in the params of req; absent params become an
// object, params of another shape are left alone.
func setMeta(req *jsonrpc.Request, key, value string) {
	var params map[string]json.RawMessage
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &params); err != nil || params == nil {
			return
		}
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[key], _ = json.Marshal(value)
	params["_meta"], _ = json.Marshal(meta)
	if b, err := json.Marshal(params); err == nil {
		req.Params = b
	}
}
