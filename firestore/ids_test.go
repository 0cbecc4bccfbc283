package firestore

import (
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"

	"github.com/agentmem/agentmem/core/driver"
)

func TestFileIDsAreReversible(t *testing.T) {
	for _, p := range []string{"MEMORY.md", "kamal/main/MEMORY.md", ".", "__x__", "a/.b/c-d_e.md"} {
		id := FileID(p)
		if strings.Contains(id, "/") || !strings.HasPrefix(id, "f~") {
			t.Fatalf("FileID(%q) = %q", p, id)
		}
		if back, ok := PathOfID(id); !ok || back != p {
			t.Fatalf("PathOfID(%q) = %q, %v; want %q", id, back, ok, p)
		}
	}
	if _, ok := PathOfID(ReceiptID("run/1")); ok {
		t.Fatal("a receipt ID decoded as a path")
	}
	if id := ReceiptID(strings.Repeat("/é", 256)); len(id) != 66 || strings.Contains(id, "/") {
		t.Fatalf("ReceiptID = %q", id)
	}
}

func TestRowSizeLimit(t *testing.T) {
	// No I/O happens: the client dials lazily and the test makes no call.
	client, err := firestore.NewClient(t.Context(), "demo-size", option.WithoutAuthentication(), option.WithEndpoint("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	d, err := New(t.Context(), client, "agentmem", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(t.Context(), client, "a/b", nil); err == nil {
		t.Fatal("a document path accepted as a collection")
	}
	f := driver.File{Path: "u/main/MEMORY.md", Version: "v", Content: strings.Repeat("x", maxDocBytes-200)}
	if _, err := d.fileData(f); err != nil {
		t.Fatalf("a row just under 1 MiB: %v", err)
	}
	f.Content += strings.Repeat("x", 200)
	if _, err := d.fileData(f); !errors.Is(err, driver.ErrTooLarge) {
		t.Fatalf("a row over 1 MiB: %v", err)
	}
}
