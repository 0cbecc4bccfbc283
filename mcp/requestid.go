package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"
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

// stamper stamps the requests of one connection or HTTP session as they
// arrive, the one place that does (the SDK keeps the JSON-RPC id to
// itself): a tools/call gets "<session>|<JSON-RPC id>" under
// metaRequestID, the key of its exactly-once application, and, while an
// Observe hook is set, every request gets its JSON-RPC id under
// metaJSONRPCID. A connection that Run or Connect serves stamps each
// message it reads (idConn); over streamable HTTP, where the SDK makes the
// transport itself, the handler stamps the POST body before the SDK reads
// it (Server.stampHTTP).
type stamper struct {
	session string // "conn:<random>", or "http:<Mcp-Session-Id>"
	ids     bool   // stamp every request's JSON-RPC id too
}

// stamper returns the stamper of one session; session is random where the
// transport names none (stdio and in-memory connections), so two
// connections, or two runs of a stdio server, never share an id.
func (s *Server) stamper(kind, session string) stamper {
	if session == "" {
		session = rand.Text()
	}
	return stamper{session: kind + ":" + session, ids: s.opts.Observe != nil}
}

// stamp stamps msg (see stamper) and reports whether it changed it.
// Params that are neither absent nor a JSON object are left for the SDK
// to refuse.
func (st stamper) stamp(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return false
	}
	set := map[string]string{}
	if st.ids {
		switch v := req.ID.Raw().(type) {
		case string:
			set[metaJSONRPCID] = v
		case int64:
			set[metaJSONRPCID] = strconv.FormatInt(v, 10)
		}
	}
	if req.Method == "tools/call" {
		set[metaRequestID] = fmt.Sprintf("%s|%T:%v", st.session, req.ID.Raw(), req.ID.Raw())
	}
	return len(set) > 0 && setMeta(req, set)
}

// body stamps the requests of a JSON-RPC message or batch; a body it
// cannot decode is returned unchanged for the SDK to refuse.
func (st stamper) body(body []byte) []byte {
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		batch = []json.RawMessage{body}
	} else if len(batch) == 0 {
		return body
	}
	out := make([]json.RawMessage, 0, len(batch))
	for _, raw := range batch {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return body
		}
		if !st.stamp(msg) {
			out = append(out, raw)
			continue
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return body
		}
		out = append(out, b)
	}
	if len(out) == 1 && bytes.TrimSpace(body)[0] != '[' {
		return out[0]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return body
	}
	return b
}

// setMeta sets _meta[key] = value for each of set in the params of req
// and reports whether it did; absent params become an object, params of
// another shape are left alone.
func setMeta(req *jsonrpc.Request, set map[string]string) bool {
	var params map[string]json.RawMessage
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &params); err != nil || params == nil {
			return false
		}
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return false
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	for k, v := range set {
		meta[k], _ = json.Marshal(v)
	}
	params["_meta"], _ = json.Marshal(meta)
	b, err := json.Marshal(params)
	if err != nil {
		return false
	}
	req.Params = b
	return true
}

// withRequestIDs wraps a transport so that each connection made from it
// stamps the requests it reads (see stamper). It also counts, in
// s.replies, the requests read whose response is not written yet, for
// Shutdown.
func (s *Server) withRequestIDs(t mcpsdk.Transport) mcpsdk.Transport {
	return &idTransport{t, s}
}

type idTransport struct {
	mcpsdk.Transport
	s *Server
}

func (t *idTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &idConn{Connection: c, stamper: t.s.stamper("conn", ""), replies: &t.s.replies}, nil
}

type idConn struct {
	mcpsdk.Connection
	stamper
	replies *inflight

	mu      sync.Mutex
	pending int // requests read, not yet answered
}

func (c *idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.stamp(msg)
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
