package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// TestNewNilArguments checks that a nil context, a nil pool and an empty
// URL are refused with store.ErrNilArgument, before anything connects.
func TestNewNilArguments(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	var noCtx context.Context
	if _, err := New(noCtx, pool, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("New(nil ctx): %v, want store.ErrNilArgument", err)
	}
	if _, err := New(t.Context(), nil, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("New(nil pool): %v, want store.ErrNilArgument", err)
	}
	if _, err := openPool(noCtx, url, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("openPool(nil ctx): %v, want store.ErrNilArgument", err)
	}
	if _, err := openPool(t.Context(), "", nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf(`openPool(""): %v, want store.ErrNilArgument`, err)
	}
}

// TestNoCreate checks Options.NoCreate: a missing table is refused with
// store.ErrStoreNotFound and not created; an existing one opens.
func TestNoCreate(t *testing.T) {
	ctx := t.Context()
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	table := uniqueTable(t, url)
	_, err := New(ctx, pool, &Options{Table: table, NoCreate: true})
	if !errors.Is(err, store.ErrStoreNotFound) {
		t.Fatalf("New(missing table, NoCreate): %v, want store.ErrStoreNotFound", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE $1::text || '%'`, table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("New(missing table, NoCreate) created %d relations (%v)", n, err)
	}

	d, err := New(ctx, pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "a.md", Content: "kept", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	d, err = New(ctx, pool, &Options{Table: table, NoCreate: true})
	if err != nil {
		t.Fatalf("New(existing table, NoCreate): %v", err)
	}
	if f, err := d.GetFile(ctx, "a.md"); err != nil || f == nil || f.Content != "kept" {
		t.Errorf("GetFile after New(NoCreate) = %+v, %v; want the file written before", f, err)
	}
}

// TestOwnedPoolClosed checks that a driver on a pool of its own (what a
// store URL opens) closes that pool on Close.
func TestOwnedPoolClosed(t *testing.T) {
	url := testURL(t)
	d, err := openPool(t.Context(), url, &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(t.Context(), driver.File{Path: "a.md", Content: "x", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d.Pool().Stat().TotalConns() != 0 {
		t.Error("Close left the pool openPool created open")
	}
}
