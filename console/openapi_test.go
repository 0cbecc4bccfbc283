package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type openAPIDoc map[string]any

func loadDoc() (openAPIDoc, error) {
	var d openAPIDoc
	if err := json.Unmarshal(openAPIDocument, &d); err != nil {
		return nil, fmt.Errorf("openapi.json does not parse: %w", err)
	}
	return d, nil
}

// operation is the operation with id, nil when none.
func (d openAPIDoc) operation(id string) map[string]any {
	for _, item := range d["paths"].(map[string]any) {
		for _, op := range item.(map[string]any) {
			if op, ok := op.(map[string]any); ok && op["operationId"] == id {
				return op
			}
		}
	}
	return nil
}

// openAPIPath is the OpenAPI path of a mux pattern.
func openAPIPath(pattern string) string { return strings.ReplaceAll(pattern, "{path...}", "{path}") }

// TestOpenAPIMatchesRoutes checks the document's structure and that it
// describes exactly the route table: every route, with its operationId
// and every status it answers, and nothing else.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi = %q, want 3.1.x", v)
	}
	if info, _ := d["info"].(map[string]any); info["title"] == nil || info["version"] == nil {
		t.Fatalf("info %v lacks title or version", info)
	}
	// Every $ref resolves.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				if resolve(d, r) == nil {
					t.Errorf("$ref %s resolves to nothing", r)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(map[string]any(d))

	documented := map[string]bool{}
	ids := map[string]bool{}
	for path, item := range d["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			op := op.(map[string]any)
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] {
				t.Errorf("%s %s: operationId %q missing or repeated", method, path, id)
			}
			ids[id] = true
			documented[strings.ToUpper(method)+" "+path+" "+id] = true
			if len(op["responses"].(map[string]any)) == 0 {
				t.Errorf("%s has no responses", id)
			}
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				if r, ok := p["$ref"].(string); ok {
					p = resolve(d, r).(map[string]any)
				}
				if p["in"] == "path" && !strings.Contains(path, "{"+p["name"].(string)+"}") {
					t.Errorf("%s: path parameter %v not in %s", id, p["name"], path)
				}
			}
			for _, seg := range strings.Split(path, "/") {
				if strings.HasPrefix(seg, "{") && !hasPathParam(d, op, strings.Trim(seg, "{}")) {
					t.Errorf("%s: %s is not declared as a path parameter", id, seg)
				}
			}
		}
	}
	for _, rt := range apiRoutes() {
		key := rt.method + " " + openAPIPath(rt.pattern) + " " + rt.op
		if !documented[key] {
			t.Errorf("route %s is not in openapi.json", key)
			continue
		}
		delete(documented, key)
		var got []int
		for code := range d.operation(rt.op)["responses"].(map[string]any) {
			n, err := strconv.Atoi(code)
			if err != nil {
				t.Errorf("%s: response %q is not a status", rt.op, code)
			}
			got = append(got, n)
		}
		slices.Sort(got)
		// Besides its statuses, every route's pattern answers 405 to the
		// methods none of its routes serve (TestMethodNotAllowed).
		want := slices.Sorted(slices.Values(slices.Concat(rt.statuses, []int{http.StatusMethodNotAllowed})))
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: openapi.json documents %v, the route answers %v", rt.op, got, want)
		}
	}
	for key := range documented {
		t.Errorf("openapi.json documents %s, which no route serves", key)
	}
}

// TestOpenAPILimits checks each operation's ?limit= against its route's
// paging: a listing documents its default and maximum; a limit whose
// bound the server's options set (search) documents no maximum.
func TestOpenAPILimits(t *testing.T) {
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range apiRoutes() {
		var schema map[string]any
		params, _ := d.operation(rt.op)["parameters"].([]any)
		for _, p := range params {
			p := p.(map[string]any)
			if r, ok := p["$ref"].(string); ok {
				p = resolve(d, r).(map[string]any)
			}
			if p["in"] == "query" && p["name"] == "limit" {
				schema = p["schema"].(map[string]any)
			}
		}
		switch {
		case rt.page.max > 0 && schema == nil:
			t.Errorf("%s pages up to %d but documents no limit", rt.op, rt.page.max)
		case rt.page.max > 0:
			if schema["minimum"] != 1.0 || schema["maximum"] != float64(rt.page.max) || schema["default"] != float64(rt.page.def) {
				t.Errorf("%s: limit schema %v, want minimum 1, maximum %d, default %d", rt.op, schema, rt.page.max, rt.page.def)
			}
		case schema != nil && schema["maximum"] != nil:
			t.Errorf("%s: limit documents maximum %v, but its route has no fixed one", rt.op, schema["maximum"])
		}
	}
}

// TestLimitBounds asks each listing for its maximum (200) and one more
// (400), so the bounds the document is checked against are the ones
// served.
func TestLimitBounds(t *testing.T) {
	e := newEnv(t)
	e.do(req{method: "PUT", target: aliceFile("main/MEMORY.md"), key: "alice-key", body: body("a")}).want(201, "")
	for _, rt := range apiRoutes() {
		if rt.page.max == 0 {
			continue
		}
		target := strings.NewReplacer("{ns}", "alice", "{path...}", "main/MEMORY.md").Replace(rt.pattern)
		e.do(req{method: rt.method, target: target + "?limit=" + strconv.Itoa(rt.page.max), key: "admin-key"}).want(200, "")
		e.do(req{method: rt.method, target: target + "?limit=" + strconv.Itoa(rt.page.max+1), key: "admin-key"}).want(400, "invalid-parameter")
	}
}

// TestMethodNotAllowed sends each pattern of the route table a method
// none of its routes serve: 405 problem+json with Allow naming exactly
// the route table's methods, as openapi.json documents (its 405 response
// declares the Allow header).
func TestMethodNotAllowed(t *testing.T) {
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := resolve(d, "#/components/responses/MethodNotAllowed/headers/Allow").(map[string]any); h == nil {
		t.Error("openapi.json's MethodNotAllowed response declares no Allow header")
	}
	e := newEnv(t)
	methods := map[string][]string{}
	for _, rt := range apiRoutes() {
		methods[rt.pattern] = append(methods[rt.pattern], rt.method)
	}
	for pattern, allowed := range methods {
		target := strings.NewReplacer("{ns}", "alice", "{path...}", "main/MEMORY.md").Replace(pattern)
		for _, m := range []string{"GET", "PUT", "POST", "DELETE", "PATCH"} {
			if slices.Contains(allowed, m) {
				continue
			}
			r := e.do(req{method: m, target: target, key: "alice-key"}).want(405, "method-not-allowed")
			if got := r.Header().Get("Allow"); got != strings.Join(allowed, ", ") {
				t.Errorf("%s %s: Allow %q, want %q", m, pattern, got, strings.Join(allowed, ", "))
			}
		}
	}
}

func hasPathParam(d openAPIDoc, op map[string]any, name string) bool {
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		p := p.(map[string]any)
		if r, ok := p["$ref"].(string); ok {
			p = resolve(d, r).(map[string]any)
		}
		if p["in"] == "path" && p["name"] == name && p["required"] == true {
			return true
		}
	}
	return false
}

// resolve follows a local JSON pointer ("#/components/schemas/File").
func resolve(d openAPIDoc, ref string) any {
	var v any = map[string]any(d)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = m[part]; !ok {
			return nil
		}
	}
	return v
}

func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", target: "/api/v1/openapi.json"}).want(200, "")
	if r.Header().Get("Content-Type") != "application/json" || r.Body.String() != string(openAPIDocument) {
		t.Fatalf("openapi.json served as %q", r.Header().Get("Content-Type"))
	}
}
