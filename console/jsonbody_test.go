package console

import (
	"strings"
	"testing"
)

// TestJSONBodiesRefuseTextTheyWouldChange sends every route that takes a
// JSON body (as openapi.json lists them) a request that succeeds with a
// plain string, then with bytes that are not UTF-8 and with an escape of
// an unpaired surrogate in that string, which encoding/json would decode
// as U+FFFD: each is 400 invalid-body and writes nothing.
func TestJSONBodiesRefuseTextTheyWouldChange(t *testing.T) {
	type jsonCase struct {
		op, method, target string
		headers            []string
		body               string // BAD marks the string to spoil
	}
	e := newEnv(t)
	seed := e.do(req{method: "PUT", target: aliceFile("main/seed.md"), key: "alice-key", body: body("v1")}).want(201, "")
	v1 := seed.json()["version"].(string)
	seedTag := e.do(req{method: "PUT", target: aliceFile("main/seed.md"), key: "alice-key", body: body("v2"),
		headers: []string{"If-Match: " + seed.Header().Get("ETag")}}).want(200, "").Header().Get("ETag")
	cases := []jsonCase{
		{"writeFile", "PUT", aliceFile("main/x.md"), []string{"If-None-Match: *"}, `{"content": "BAD text"}`},
		{"writeFile", "PUT", aliceFile("main/y.md"), []string{"If-None-Match: *"}, `{"content": "text", "metadata": {"k": "BAD"}}`},
		{"restoreVersion", "POST", "/api/v1/namespaces/alice/restore/main/seed.md", []string{"If-Match: " + seedTag}, `{"version": "BAD"}`},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.op] = true
	}
	doc, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range apiRoutes() {
		op := doc.operation(rt.op)
		rb, _ := op["requestBody"].(map[string]any)
		content, _ := rb["content"].(map[string]any)
		if _, ok := content["application/json"]; ok && !covered[rt.op] {
			t.Errorf("%s takes JSON: add it to this test", rt.op)
		}
	}
	contents := func() string {
		var b strings.Builder
		for _, p := range []string{"alice/main/x.md", "alice/main/y.md", "alice/main/seed.md"} {
			b.WriteString(p + "=" + e.content(p) + "\n")
		}
		return b.String()
	}
	before := contents()
	for _, bad := range []string{"\xc3\x28", "\xff", `\ud800`, `\udc00x`, `\ud800\u0041`, `a\\\ud800`} {
		for _, c := range cases {
			r := e.do(req{method: c.method, target: c.target, key: "alice-key", headers: c.headers, body: strings.Replace(c.body, "BAD", bad, 1)})
			if r.Code != 400 {
				t.Errorf("%s with %q: status %d, want 400; body %s", c.op, bad, r.Code, r.Body)
				continue
			}
			r.want(400, "invalid-body")
		}
	}
	if got := contents(); got != before {
		t.Fatalf("refused bodies wrote:\n%s\nwant\n%s", got, before)
	}
	// The same requests with a good string succeed, so the spoiled
	// string was what they were refused for; escapes that make a
	// character pass.
	good := map[string]string{"writeFile": `caf\u00e9 \ud83d\ude00 \\ud800 \"\\`, "restoreVersion": v1}
	for _, c := range cases {
		r := e.do(req{method: c.method, target: c.target, key: "alice-key", headers: c.headers, body: strings.Replace(c.body, "BAD", good[c.op], 1)})
		if r.Code >= 300 {
			t.Errorf("%s with a good string: status %d; body %s", c.op, r.Code, r.Body)
		}
	}
	if got := e.content("alice/main/x.md"); got != "café 😀 \\ud800 \"\\ text" {
		t.Errorf("stored %q", got)
	}
}
