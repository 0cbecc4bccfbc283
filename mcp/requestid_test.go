package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStamperBody: an HTTP body is stamped message by message with the
// stamp a connection gives each message it reads: a tools/call gets the
// session and its id, every request its JSON-RPC id while ids is set, and
// what is not a call (a notification), or not stamped, stays byte for
// byte; a body that is not JSON-RPC is passed on unchanged.
func TestStamperBody(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_memory","_meta":{"k":"v"}}}`
	list := `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	meta := func(t *testing.T, raw []byte) map[string]any {
		t.Helper()
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m.Params.Meta
	}
	for _, ids := range []bool{false, true} {
		st := stamper{session: "http:s1", ids: ids}
		out := st.body([]byte("[" + call + "," + list + "," + note + "]"))
		var batch []json.RawMessage
		if err := json.Unmarshal(out, &batch); err != nil || len(batch) != 3 {
			t.Fatalf("ids=%v: batch out = %s, %v", ids, out, err)
		}
		m := meta(t, batch[0])
		if m[metaRequestID] != "http:s1|int64:7" || m["k"] != "v" {
			t.Errorf("ids=%v: tools/call _meta = %v", ids, m)
		}
		if got, want := m[metaJSONRPCID] != nil, ids; got != want {
			t.Errorf("ids=%v: tools/call has the JSON-RPC id: %v", ids, got)
		}
		if ids && (m[metaJSONRPCID] != "7" || meta(t, batch[1])[metaJSONRPCID] != "a") {
			t.Errorf("JSON-RPC ids: %s", out)
		}
		if !ids && string(batch[1]) != list {
			t.Errorf("tools/list rewritten without ids: %s", batch[1])
		}
		if string(batch[2]) != note {
			t.Errorf("notification rewritten: %s", batch[2])
		}
		// One message, not a batch, comes back as one message, stamped as a
		// connection stamps what it reads.
		one := st.body([]byte(call))
		msg, err := jsonrpc.DecodeMessage([]byte(call))
		if err != nil {
			t.Fatal(err)
		}
		if !st.stamp(msg) {
			t.Fatal("stamp left a tools/call alone")
		}
		if got, want := string(one), string(msg.(*jsonrpc.Request).Params); !strings.Contains(got, want) || strings.HasPrefix(got, "[") {
			t.Errorf("ids=%v: body %s, a connection's stamp gives params %s", ids, got, want)
		}
	}
	for _, bad := range []string{"not json", "[]", `[{"jsonrpc":"2.0","id":1,"method":"tools/call"},42]`} {
		if out := (stamper{session: "http:s"}).body([]byte(bad)); string(out) != bad {
			t.Errorf("body(%s) = %s, want it unchanged", bad, out)
		}
	}
}
