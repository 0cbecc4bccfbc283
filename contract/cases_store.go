package contract

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// Cases returns the suite's cases, in order.
func Cases() []Case {
	var all []Case
	for _, group := range [][]Case{storeCases, walkCases, receiptCases, searchCases, pathCases, faultCases, afterCrashCases, replayCases, concurrencyCases, adversarialCases, costCases, historyCases, vectorCases, indexCases, persistCases, recencyCases, lifetimeCases} {
		all = append(all, group...)
	}
	return all
}

var storeCases = []Case{
	{"capabilities", func(t *testing.T, e *Env) {
		got := e.Store.Capabilities()
		want := e.h.Capabilities
		if e.Mode == modePrimitives {
			want = driver.Capabilities{History: want.History}
		}
		eq(t, "capabilities", got, want)
	}},
	{"backend_name", func(t *testing.T, e *Env) {
		// The backend names itself (driver.Namer), and the store over the
		// suite's wrappers reports that name, not a wrapper's.
		n, ok := e.Raw.(driver.Namer)
		if !ok || n.Name() == "" || strings.ContainsAny(n.Name(), "./* ") {
			t.Fatalf("%T names no backend (driver.Namer): implement Name() with the engine's short name", e.Raw)
		}
		eq(t, "Store.Backend", e.Store.Backend(), n.Name())
	}},
	{"cas_contract", func(t *testing.T, e *Env) {
		s := e.Store
		m := write(t, s, "notes/main.md", "hello", "")
		if m.Version == "" || m.Existed || m.Replayed {
			t.Fatalf("create = %+v", m)
		}
		f := read(t, s, "notes/main.md", 100)
		eq(t, "content", f.Content, "hello")
		eq(t, "version", f.Version, m.Version)
		eq(t, "operation id", f.OperationID, "")
		m2 := write(t, s, "notes/main.md", "hello again", m.Version)
		if m2.Version == m.Version || !m2.Existed || m2.Replayed {
			t.Fatalf("update = %+v", m2)
		}
		_, err := s.Write(ctx(t), store.WriteRequest{Path: "notes/main.md", Content: "stale", Expected: m.Version})
		mustErr(t, err, store.ErrConflict, "stale write")
		_, err = s.Delete(ctx(t), store.DeleteRequest{Path: "notes/main.md", Expected: m.Version})
		mustErr(t, err, store.ErrConflict, "stale delete")
		d, err := s.Delete(ctx(t), store.DeleteRequest{Path: "notes/main.md", Expected: m2.Version})
		if err != nil || d.Version != "" || !d.Existed || d.Replayed {
			t.Fatalf("delete = %+v, %v", d, err)
		}
		if read(t, s, "notes/main.md", 10) != nil {
			t.Fatal("file still readable after delete")
		}
		eq(t, "content after conflicts", read(t, s, "x.md", 1) == nil, true)
	}},
	{"create_conflicts_when_present", func(t *testing.T, e *Env) {
		create(t, e.Store, "a.md", "one")
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "a.md", Content: "two"})
		mustErr(t, err, store.ErrConflict, "create over existing")
		eq(t, "content", read(t, e.Store, "a.md", 10).Content, "one")
	}},
	{"write_absent_with_version_conflicts", func(t *testing.T, e *Env) {
		v := create(t, e.Store, "a.md", "one")
		_, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: "a.md", Expected: v})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Store.Write(ctx(t), store.WriteRequest{Path: "a.md", Content: "two", Expected: v})
		mustErr(t, err, store.ErrConflict, "update of deleted file")
		_, err = e.Store.Delete(ctx(t), store.DeleteRequest{Path: "a.md", Expected: v})
		mustErr(t, err, store.ErrConflict, "delete of deleted file")
	}},
	{"delete_absent_expected_none", func(t *testing.T, e *Env) {
		m, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: "nothing.md"})
		if err != nil || m.Existed || m.Replayed || m.Version != "" {
			t.Fatalf("delete absent = %+v, %v", m, err)
		}
	}},
	{"delete_present_expected_none_conflicts", func(t *testing.T, e *Env) {
		create(t, e.Store, "a.md", "x")
		_, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: "a.md"})
		mustErr(t, err, store.ErrConflict, "delete with expected none")
		eq(t, "still there", read(t, e.Store, "a.md", 5).Content, "x")
	}},
	{"versions_never_repeat", func(t *testing.T, e *Env) {
		s := e.Store
		seen := map[string]bool{}
		v1 := create(t, s, "same.md", "same")
		seen[v1] = true
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "same.md", Expected: v1}); err != nil {
			t.Fatal(err)
		}
		v2 := create(t, s, "same.md", "same")
		if seen[v2] {
			t.Fatal("version reused after delete and re-create")
		}
		_, err := s.Write(ctx(t), store.WriteRequest{Path: "same.md", Content: "same", Expected: v1})
		mustErr(t, err, store.ErrConflict, "write with pre-delete version")
		_, err = s.Delete(ctx(t), store.DeleteRequest{Path: "same.md", Expected: v1})
		mustErr(t, err, store.ErrConflict, "delete with pre-delete version")
		v := v2
		for i := 0; i < 5; i++ {
			seen[v] = true
			v = write(t, s, "same.md", "same", v).Version
			if seen[v] {
				t.Fatalf("version %q repeated on identical rewrite", v)
			}
		}
	}},
	{"bounded_read", func(t *testing.T, e *Env) {
		v := create(t, e.Store, "a.md", "0123456789")
		f := read(t, e.Store, "a.md", 4)
		if f.Content != "0123" || !f.Truncated || f.Version != v {
			t.Fatalf("read(4) = %+v", f)
		}
		f = read(t, e.Store, "a.md", 20)
		if f.Content != "0123456789" || f.Truncated {
			t.Fatalf("read(20) = %+v", f)
		}
		f = read(t, e.Store, "a.md", 10)
		if f.Truncated {
			t.Fatal("read of exactly the length is not truncated")
		}
	}},
	{"unicode_read_bounds", func(t *testing.T, e *Env) {
		content := "héllo wörld 😀😀 日本語"
		create(t, e.Store, "u.md", content)
		f := read(t, e.Store, "u.md", 14)
		eq(t, "14 runes", f.Content, "héllo wörld 😀😀")
		eq(t, "truncated", f.Truncated, true)
		f = read(t, e.Store, "u.md", len([]rune(content)))
		eq(t, "whole", f.Content, content)
		eq(t, "not truncated", f.Truncated, false)
	}},
	{"bounded_listing", func(t *testing.T, e *Env) {
		for _, p := range []string{"c.md", "a.md", "b.md"} {
			create(t, e.Store, p, p)
		}
		eqSlice(t, "list(2)", list(t, e.Store, "", 2), []string{"a.md", "b.md"})
		eqSlice(t, "list(10)", list(t, e.Store, "", 10), []string{"a.md", "b.md", "c.md"})
	}},
	{"listing_prefix_nested", func(t *testing.T, e *Env) {
		for _, p := range []string{"t/main/MEMORY.md", "t/main/topic.md", "t/main/sub/deep.md", "t/other/x.md", "u/main/y.md"} {
			create(t, e.Store, p, "x")
		}
		eqSlice(t, "t/main/", list(t, e.Store, "t/main/", 10), []string{"t/main/MEMORY.md", "t/main/sub/deep.md", "t/main/topic.md"})
		eqSlice(t, "t/", list(t, e.Store, "t/", 10), []string{"t/main/MEMORY.md", "t/main/sub/deep.md", "t/main/topic.md", "t/other/x.md"})
		eqSlice(t, "empty prefix limit", list(t, e.Store, "", 2), []string{"t/main/MEMORY.md", "t/main/sub/deep.md"})
		eqSlice(t, "missing prefix", list(t, e.Store, "zzz/", 10), nil)
	}},
	{"listing_tenant_boundary", func(t *testing.T, e *Env) {
		for _, p := range []string{"tenant/main/a.md", "tenant-b/main/b.md", "tenantc.md", "tenant/main/z.md"} {
			create(t, e.Store, p, "x")
		}
		eqSlice(t, "tenant/", list(t, e.Store, "tenant/", 10), []string{"tenant/main/a.md", "tenant/main/z.md"})
		eqSlice(t, "tenant-b/", list(t, e.Store, "tenant-b/", 10), []string{"tenant-b/main/b.md"})
		// A plain string prefix: "tenant" matches all three tenants, in code-point order.
		eqSlice(t, "tenant", list(t, e.Store, "tenant", 10), []string{"tenant-b/main/b.md", "tenant/main/a.md", "tenant/main/z.md", "tenantc.md"})
	}},
	{"listing_code_point_order", func(t *testing.T, e *Env) {
		paths := []string{"b.md", "B.md", "a-b.md", "a_b.md", "a.b.md", "a/b.md", "a0.md", "Z.md", "_.md", "-.md"}
		for _, p := range paths {
			create(t, e.Store, p, p)
		}
		want := append([]string(nil), paths...)
		sort.Strings(want)
		eqSlice(t, "order", list(t, e.Store, "", 100), want)
	}},
	{"listing_pages_past_limit", func(t *testing.T, e *Env) {
		var want []string
		for i := 0; i < 30; i++ {
			p := fmt.Sprintf("s/f%02d.md", i)
			create(t, e.Store, p, "x")
			want = append(want, p)
		}
		for _, p := range []string{"r/x.md", "t/x.md"} {
			create(t, e.Store, p, "x")
		}
		// Deleted files must not take room in a page.
		for i := 0; i < 10; i++ {
			f := read(t, e.Store, want[i], 1)
			if _, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: want[i], Expected: f.Version, Operation: op(fmt.Sprintf("del-%d", i), "fp")}); err != nil {
				t.Fatal(err)
			}
		}
		eqSlice(t, "page", list(t, e.Store, "s/", 7), want[10:17])
		eqSlice(t, "all", list(t, e.Store, "s/", 100), want[10:])
	}},
	{"invalid_paths", func(t *testing.T, e *Env) {
		bad := []string{"../escape.md", "/absolute.md", "a//b.md", "a/../../b.md", "a b.md", "", "a/", "a..b.md", strings.Repeat("x", 201), "é.md", "a\x00b", "a\\b.md", ".", "t/./main.md"}
		for _, p := range bad {
			_, err := e.Store.Read(ctx(t), p, 10)
			mustErr(t, err, store.ErrInvalidPath, "read "+p)
			_, err = e.Store.Write(ctx(t), store.WriteRequest{Path: p, Content: "x"})
			mustErr(t, err, store.ErrInvalidPath, "write "+p)
			_, err = e.Store.Delete(ctx(t), store.DeleteRequest{Path: p})
			mustErr(t, err, store.ErrInvalidPath, "delete "+p)
		}
		create(t, e.Store, strings.Repeat("x", 200), "ok")
		eqSlice(t, "nothing written", list(t, e.Store, "", 10), []string{strings.Repeat("x", 200)})
	}},
	{"invalid_prefixes", func(t *testing.T, e *Env) {
		for _, p := range []string{"tenant//", "/tenant", "a b/", "../", "x/../"} {
			_, err := e.Store.ListPaths(ctx(t), p, 10)
			mustErr(t, err, store.ErrInvalidPath, "list "+p)
			_, err = e.Store.Search(ctx(t), search.Request{Prefix: p, Query: "x", Limit: 1, MaxFiles: 1, MaxChars: 10, MaxFileChars: 10})
			mustErr(t, err, store.ErrInvalidPath, "search "+p)
		}
	}},
	{"nonpositive_bounds", func(t *testing.T, e *Env) {
		create(t, e.Store, "a.md", "x")
		for _, n := range []int{0, -1} {
			_, err := e.Store.Read(ctx(t), "a.md", n)
			mustErr(t, err, store.ErrInvalidBound, "read max_chars")
			_, err = e.Store.ListPaths(ctx(t), "", n)
			mustErr(t, err, store.ErrInvalidBound, "list limit")
		}
	}},
	{"metadata_roundtrip", func(t *testing.T, e *Env) {
		meta := map[string]string{"source": "pruner", "run": "r-1", "ünï": "cödé ✓"}
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "m.md", Content: "x", Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		meta["source"] = "changed after the write"
		f := read(t, e.Store, "m.md", 10)
		eq(t, "metadata", fmt.Sprint(f.Metadata), fmt.Sprint(map[string]string{"source": "pruner", "run": "r-1", "ünï": "cödé ✓"}))
		f.Metadata["run"] = "mutated copy"
		eq(t, "metadata is a copy", read(t, e.Store, "m.md", 10).Metadata["run"], "r-1")
	}},
	{"metadata_cleared_by_plain_write", func(t *testing.T, e *Env) {
		m, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "m.md", Content: "x", Metadata: map[string]string{"k": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		write(t, e.Store, "m.md", "y", m.Version)
		if md := read(t, e.Store, "m.md", 10).Metadata; md != nil {
			t.Fatalf("metadata after a write without it = %v", md)
		}
	}},
	{"metadata_empty_is_none", func(t *testing.T, e *Env) {
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "m.md", Content: "x", Metadata: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		if md := read(t, e.Store, "m.md", 10).Metadata; md != nil {
			t.Fatalf("empty metadata read back as %#v, want nil", md)
		}
	}},
	{"metadata_rules", func(t *testing.T, e *Env) {
		for name, meta := range map[string]map[string]string{
			"nul key":   {"a\x00": "v"},
			"nul value": {"k": "v\x00"},
			"too long":  {"k": strings.Repeat("é", store.MaxMetadataChars)},
			"bad utf-8": {"k": "\xff"},
		} {
			_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "m.md", Content: "x", Metadata: meta})
			mustErr(t, err, store.ErrInvalidMetadata, name)
		}
		if read(t, e.Store, "m.md", 1) != nil {
			t.Fatal("a refused write left a file")
		}
		// Exactly at the limit, counted in runes: {"k":"ééé…"} = 8 + n chars.
		ok := map[string]string{"k": strings.Repeat("é", store.MaxMetadataChars-8)}
		if _, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "m.md", Content: "x", Metadata: ok}); err != nil {
			t.Fatalf("metadata of exactly %d chars refused: %v", store.MaxMetadataChars, err)
		}
		eq(t, "stored", read(t, e.Store, "m.md", 1).Metadata["k"], ok["k"])
	}},
	{"operation_id_reported_by_read", func(t *testing.T, e *Env) {
		m, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "a.md", Content: "x", Operation: op("op-1", "fp")})
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "op id", read(t, e.Store, "a.md", 1).OperationID, "op-1")
		write(t, e.Store, "a.md", "y", m.Version)
		eq(t, "op id after plain write", read(t, e.Store, "a.md", 1).OperationID, "")
	}},
	{"cross_instance_cas", func(t *testing.T, e *Env) {
		v := create(t, e.Store, "race.md", "base")
		other := e.Reopen(t)
		eq(t, "other instance reads", read(t, other, "race.md", 10).Version, v)
		_, err1 := e.Store.Write(ctx(t), store.WriteRequest{Path: "race.md", Content: "one", Expected: v})
		_, err2 := other.Write(ctx(t), store.WriteRequest{Path: "race.md", Content: "two", Expected: v})
		if err1 != nil || !errors.Is(err2, store.ErrConflict) {
			t.Fatalf("racing CAS: first %v, second %v", err1, err2)
		}
		eq(t, "winner", read(t, other, "race.md", 10).Content, "one")
	}},
	{"invalid_content", func(t *testing.T, e *Env) {
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "bad.md", Content: "ok \xff\xfe not"})
		mustErr(t, err, store.ErrInvalidContent, "invalid UTF-8")
		if read(t, e.Store, "bad.md", 1) != nil {
			t.Fatal("refused write landed")
		}
		nul := "NUL \x00 and controls \x01\x7f are text"
		create(t, e.Store, "ok.md", nul)
		eq(t, "round trip", read(t, e.Store, "ok.md", 100).Content, nul)
	}},
	{"context_canceled", func(t *testing.T, e *Env) {
		c, cancel := context.WithCancel(ctx(t))
		cancel()
		_, err := e.Store.Write(c, store.WriteRequest{Path: "a.md", Content: "x"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("write with canceled context: %v", err)
		}
		if read(t, e.Store, "a.md", 1) != nil {
			t.Fatal("write with canceled context landed")
		}
		c, cancel = context.WithTimeout(ctx(t), time.Nanosecond)
		defer cancel()
		<-c.Done()
		_, err = e.Store.Read(c, "a.md", 1)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read with expired context: %v", err)
		}
	}},
}
