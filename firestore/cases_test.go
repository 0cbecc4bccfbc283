package firestore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// firestoreCases are the backend's own cases, run in both modes.
var firestoreCases = []contract.Case{
	{Name: "firestore_too_large", Run: func(t *testing.T, e *contract.Env) {
		_, err := e.Store.Write(t.Context(), store.WriteRequest{Path: "big.md", Content: strings.Repeat("x", 1<<20)})
		if !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("1 MiB write: %v, want ErrTooLarge", err)
		}
		_, err = e.Store.Write(t.Context(), store.WriteRequest{Path: strings.Repeat("p/", 749) + "x", Content: "x"})
		if !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("1,499-byte path: %v, want ErrTooLarge", err)
		}
		if f, err := e.Store.Read(t.Context(), strings.Repeat("p/", 749)+"x", 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read of an unstorable path = %+v, %v", f, err)
		}
		content := strings.Repeat("é", 500_000) // 1,000,000 bytes
		if _, err := e.Store.Write(t.Context(), store.WriteRequest{Path: "big.md", Content: content}); err != nil {
			t.Fatalf("1 MB write: %v", err)
		}
		if f, err := e.Store.Read(t.Context(), "big.md", 1<<20); err != nil || f.Content != content {
			t.Fatalf("1 MB read back: %v", err)
		}
	}},
	{Name: "firestore_odd_values", Run: func(t *testing.T, e *contract.Env) {
		content := "NUL \x00, emoji 😀, end"
		meta := map[string]string{"__name__": "a", "a.b": "`x`", "~": "/"}
		if _, err := e.Store.Write(t.Context(), store.WriteRequest{Path: "o/x.md", Content: content, Metadata: meta}); err != nil {
			t.Fatal(err)
		}
		f, err := e.Store.Read(t.Context(), "o/x.md", 1000)
		if err != nil || f.Content != content || fmt.Sprint(f.Metadata) != fmt.Sprint(meta) {
			t.Fatalf("read back %+v, %v", f, err)
		}
	}},
	{Name: "firestore_layout", Run: func(t *testing.T, e *contract.Env) {
		m, err := e.Store.Write(t.Context(), store.WriteRequest{Path: "t/main/a.md", Content: "x", Operation: &store.Operation{ID: "run/1/call", Fingerprint: "fp"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.Delete(t.Context(), store.DeleteRequest{Path: "t/main/a.md", Expected: m.Version, Operation: &store.Operation{ID: "del", Fingerprint: "fp"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.Write(t.Context(), store.WriteRequest{Path: "t/main/b.md", Content: "y"}); err != nil {
			t.Fatal(err)
		}
		docs, err := e.Raw.(*firestore.Driver).Collection().Documents(t.Context()).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		var files, receipts []string
		for _, s := range docs {
			_, hasPath := s.Data()["path"]
			switch id := s.Ref.ID; {
			case id == firestore.ReceiptID("run/1/call") || id == firestore.ReceiptID("del"):
				receipts = append(receipts, id)
				if hasPath {
					t.Errorf("receipt %s has a path field", id)
				}
				if _, ok := s.Data()["expiresAt"].(time.Time); !ok {
					t.Errorf("receipt %s has no expiresAt timestamp", id)
				}
			default:
				p, ok := firestore.PathOfID(id)
				if !ok || !hasPath || s.Data()["path"] != p || firestore.FileID(p) != id {
					t.Errorf("document %s: path %v", id, s.Data()["path"])
				}
				files = append(files, p)
			}
		}
		if len(receipts) != 2 || strings.Join(files, ",") != "t/main/b.md" {
			t.Fatalf("files %q, receipts %q", files, receipts)
		}
	}},
	{Name: "firestore_lifetime_is_no_ttl", Run: func(t *testing.T, e *contract.Env) {
		// A file's expiry rides in its metadata, never in expiresAt, the
		// field a TTL policy deletes by: the store records the expiry.
		if _, err := e.Store.Write(t.Context(), store.WriteRequest{Path: "l/a.md", Content: "x", ExpiresAt: e.Clock.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		s, err := e.Raw.(*firestore.Driver).Collection().Doc(firestore.FileID("l/a.md")).Get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Data()["expiresAt"]; ok {
			t.Fatalf("an expiring file has expiresAt: %v", s.Data())
		}
		if m, _ := s.Data()["metadata"].(string); !strings.Contains(m, driver.ExpiresKey) {
			t.Fatalf("metadata %q holds no %s", m, driver.ExpiresKey)
		}
	}},
	{Name: "firestore_scope_pages_past_subfolders", Run: func(t *testing.T, e *contract.Env) {
		d := e.Raw
		add := func(p string, tomb bool) {
			if err := d.CreateFile(t.Context(), driver.File{Path: p, Content: p, Version: "v-" + p, Tombstone: tomb}); err != nil {
				t.Fatal(err)
			}
		}
		add("s/a.md", false)
		for i := range 12 {
			add(fmt.Sprintf("s/b/%02d.md", i), false)
		}
		add("s/b-c.md", false)
		add("s/c/d/e.md", false)
		add("s/d.md", true)
		add("s/e.md", false)
		add("s0.md", false)
		add("t/x.md", false)
		sr := d.(driver.ScopeReader)
		for limit, want := range map[int]string{1: "s/a.md", 2: "s/a.md s/b-c.md", 3: "s/a.md s/b-c.md s/e.md", 9: "s/a.md s/b-c.md s/e.md"} {
			got, err := sr.ReadScope(t.Context(), driver.ScopeParams{Prefix: "s/", Limit: limit, MaxChars: 3})
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range got {
				paths = append(paths, f.Path)
				if f.Content != f.Path[:3] || !f.Truncated {
					t.Fatalf("content %q truncated %v", f.Content, f.Truncated)
				}
			}
			if strings.Join(paths, " ") != want {
				t.Fatalf("limit %d: %q, want %q", limit, paths, want)
			}
		}
	}},
}
