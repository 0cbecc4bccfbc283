package console

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPISchemasMatchTypes checks the document's schemas against the
// Go types the API encodes: the same properties, and required exactly
// the fields that are never omitted, so a field added to a response (the
// token counts of a file and of the snapshot's budget, a file's lifetime)
// is documented.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"File": FileJSON{}, "FilePage": ListJSON{}, "Snapshot": SnapshotJSON{}, "Budget": BudgetJSON{},
		"Part": PartJSON{}, "Mutation": MutationJSON{}, "Search": SearchJSON{}, "Match": MatchJSON{}, "Span": SpanJSON{}, "Forget": ForgetJSON{},
		"Namespace": NamespaceJSON{}, "NamespacePage": NamespacesJSON{}, "ListedFile": ListedFile{}, "WriteBody": WriteBody{}, "Entry": EntryJSON{},
		"Consolidate": ConsolidateJSON{}, "Expiry": ExpiryJSON{}} {
		schema, _ := resolve(d, "#/components/schemas/"+name).(map[string]any)
		if schema == nil {
			t.Errorf("openapi.json has no schema %s", name)
			continue
		}
		var fields, required []string
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			tag, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			fields = append(fields, tag)
			if !strings.Contains(opts, "omitempty") {
				required = append(required, tag)
			}
		}
		var props, req []string
		for p := range schema["properties"].(map[string]any) {
			props = append(props, p)
		}
		for _, r := range schema["required"].([]any) {
			req = append(req, r.(string))
		}
		for _, l := range [][]string{fields, required, props, req} {
			slices.Sort(l)
		}
		if !slices.Equal(props, fields) || !slices.Equal(req, required) {
			t.Errorf("schema %s: properties %v, required %v; %s encodes %v, never omitting %v", name, props, req, typ.Name(), fields, required)
		}
	}
}
