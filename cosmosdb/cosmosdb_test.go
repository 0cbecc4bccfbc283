package cosmosdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
)

// TestRequestsPerIdempotentWrite pins the target: after the tool's read,
// an idempotent write costs 1 request (one TransactionalBatch: the receipt
// and the replace with the cached ETag), and 3 over the primitives
// (reserve, replace with the cached ETag, complete with the cached ETag).
// With history on it still costs 1 (the entry rides in the batch), and 5
// over the primitives (the pending entry's CreateItem before the change,
// its PatchItem with the cached ETag after).
func TestRequestsPerIdempotentWrite(t *testing.T) {
	for _, mode := range []struct {
		name    string
		history bool
		want    int64
	}{{"full", false, 1}, {"primitives", false, 3}, {"full", true, 1}, {"primitives", true, 5}} {
		t.Run(fmt.Sprintf("%s/history=%v", mode.name, mode.history), func(t *testing.T) {
			db := newDatabase(t)
			d, rq := db.countedDriver(t)
			var dd driver.Driver = d
			if mode.name == "primitives" {
				dd = contract.Primitives(d)
			}
			opts := &store.Options{}
			if mode.history {
				opts.History = &store.HistoryOptions{}
			}
			s := store.New(dd, opts)
			ctx := t.Context()
			path := "u/main/MEMORY.md"
			if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "- a\n"}); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				f, err := s.Read(ctx, path, 1<<16)
				if err != nil {
					t.Fatal(err)
				}
				before := rq.count()
				if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: f.Content + "- b\n", Expected: f.Version,
					Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}}); err != nil {
					t.Fatal(err)
				}
				if n := rq.count() - before; n != mode.want {
					t.Fatalf("write %d took %d requests, want %d", i, n, mode.want)
				}
			}
		})
	}
}

// TestStaleETag covers the cache: a 412 on a cached ETag whose row still
// has the expected version retries with the fresh ETag; a 412 on a row
// whose version changed is driver.ErrPrecondition.
func TestStaleETag(t *testing.T) {
	db := newDatabase(t)
	d, rq := db.countedDriver(t)
	other := db.reopen(t, d)
	ctx := t.Context()
	f := driver.File{Path: "a/b.md", Content: "one", Version: "v1"}
	if err := d.CreateFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	// Another process rewrites the row with the same version: the ETag
	// changes, the version does not.
	f.Content = "one again"
	if err := other.ReplaceFile(ctx, f, "v1"); err != nil {
		t.Fatal(err)
	}
	before := rq.count()
	if err := d.ReplaceFile(ctx, driver.File{Path: "a/b.md", Content: "two", Version: "v2"}, "v1"); err != nil {
		t.Fatal(err)
	}
	if n := rq.count() - before; n != 3 {
		t.Fatalf("stale ETag, same version: %d requests, want 3 (412, read, replace)", n)
	}
	// Now the other process changes the version behind d's cache.
	if err := other.ReplaceFile(ctx, driver.File{Path: "a/b.md", Content: "three", Version: "v3"}, "v2"); err != nil {
		t.Fatal(err)
	}
	before = rq.count()
	err := d.ReplaceFile(ctx, driver.File{Path: "a/b.md", Content: "four", Version: "v4"}, "v2")
	if !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale version: %v, want ErrPrecondition", err)
	}
	if n := rq.count() - before; n != 2 {
		t.Fatalf("stale version: %d requests, want 2 (412, read)", n)
	}
	if err := d.DeleteFile(ctx, "a/b.md", "v2"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("delete with a stale version: %v", err)
	}
	if err := d.DeleteFile(ctx, "a/b.md", "v3"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteFile(ctx, "a/b.md", "v3"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("delete of a missing row: %v", err)
	}
	if err := d.ReplaceFile(ctx, f, "v3"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("replace of a missing row: %v", err)
	}
}

// TestReceiptConditions covers CompleteReceipt and DropReceipt with stale
// cached ETags.
func TestReceiptConditions(t *testing.T) {
	db := newDatabase(t)
	d := db.newDriver(t)
	other := db.reopen(t, d)
	ctx := t.Context()
	now := time.Now()
	r := driver.Receipt{ID: "op/with?odd#chars\\" + strings.Repeat("x", 500), Fingerprint: "fp", Kind: driver.KindWrite,
		Path: "a.md", Version: "v1", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := d.ReserveReceipt(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := other.ReserveReceipt(ctx, r); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("second reserve: %v", err)
	}
	if err := other.DropReceipt(ctx, r.ID, "v0"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("drop with another version: %v", err)
	}
	done := r
	done.Completed = true
	if err := other.CompleteReceipt(ctx, done); err != nil {
		t.Fatal(err)
	}
	// d's cached ETag is stale now; the receipt is completed.
	if err := d.CompleteReceipt(ctx, done); err != nil {
		t.Fatalf("complete twice: %v", err)
	}
	if err := d.DropReceipt(ctx, r.ID, r.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("drop of a completed receipt: %v", err)
	}
	other2 := done
	other2.Version = "v2"
	if err := d.CompleteReceipt(ctx, other2); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete with another version: %v", err)
	}
	got, err := other.GetReceipt(ctx, r.ID)
	if err != nil || got == nil || !got.Completed || got.ID != r.ID || !got.ExpiresAt.Equal(r.ExpiresAt) {
		t.Fatalf("receipt = %+v, %v", got, err)
	}
	// Drop a pending receipt through a stale cache.
	p := r
	p.ID = "op-2"
	if err := d.ReserveReceipt(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := other.DropReceipt(ctx, p.ID, p.Version); err != nil {
		t.Fatal(err)
	}
	if err := other.ReserveReceipt(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := d.DropReceipt(ctx, p.ID, p.Version); err != nil {
		t.Fatalf("drop after a stale ETag: %v", err)
	}
	if got, err := other.GetReceipt(ctx, p.ID); err != nil || got != nil {
		t.Fatalf("dropped receipt = %+v, %v", got, err)
	}
	if err := d.DropReceipt(ctx, p.ID, p.Version); err != nil {
		t.Fatalf("drop of a missing receipt: %v", err)
	}
	if err := d.CompleteReceipt(ctx, p); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete of a missing receipt: %v", err)
	}
}

// TestItemLayout checks what is stored: ids without "/", the partition
// key, and a ttl on tombstones and receipts only.
func TestItemLayout(t *testing.T) {
	db := newDatabase(t)
	d := db.newDriver(t)
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	long := strings.Repeat("s", 200) + "/" + strings.Repeat("t", 200) + "/x.md"
	for _, f := range []driver.File{
		{Path: "t/main/a.md", Content: "x", Version: "v1", Metadata: map[string]string{"id": "k", "": "empty"}},
		{Path: "t/main/gone.md", Version: "v2", Tombstone: true, ExpiresAt: exp},
		{Path: "top.md", Content: "y", Version: "v3"},
		{Path: long, Content: "z", Version: "v4"},
	} {
		if err := d.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		g, err := d.GetFile(ctx, f.Path)
		if err != nil || g == nil {
			t.Fatalf("get %s: %+v, %v", f.Path, g, err)
		}
		if fmt.Sprint(*g) != fmt.Sprint(f) && !(f.Tombstone && g.ExpiresAt.Equal(f.ExpiresAt)) {
			t.Fatalf("round trip: %+v, want %+v", *g, f)
		}
	}
	r := driver.Receipt{ID: "op", Fingerprint: "fp", Kind: driver.KindDelete, Path: "t/main/gone.md", Version: "v2", CreatedAt: time.Now(), ExpiresAt: exp}
	if err := d.ReserveReceipt(ctx, r); err != nil {
		t.Fatal(err)
	}
	rows := rawItems(t, d)
	ttl := map[string]bool{}
	for _, it := range rows {
		id, _ := it["id"].(string)
		if strings.Contains(id, "/") {
			t.Errorf("id %q holds /", id)
		}
		if v, ok := it["ttl"].(float64); ok {
			if v < 3500 || v > 3601 {
				t.Errorf("%s: ttl %v, want about an hour", id, v)
			}
			ttl[fmt.Sprint(it["type"], ":", it["path"])] = true
		}
	}
	want := map[string]bool{"file:t/main/gone.md": true, "receipt:t/main/gone.md": true}
	if fmt.Sprint(ttl) != fmt.Sprint(want) {
		t.Fatalf("items with a ttl: %v, want %v", ttl, want)
	}
	pks := map[string]string{}
	for _, it := range rows {
		if it["type"] == "file" {
			pks[it["path"].(string)] = it["pk"].(string)
		}
	}
	if pks["t/main/a.md"] != "t" || pks["top.md"] != "/" || pks[long] != strings.Repeat("s", 200) {
		t.Fatalf("partition keys: %v", pks)
	}
	props, err := d.Container().Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := props.ContainerProperties; p.DefaultTimeToLive == nil || *p.DefaultTimeToLive != -1 {
		t.Fatalf("DefaultTimeToLive = %v, want -1", p.DefaultTimeToLive)
	}
}

func rawItems(t *testing.T, d *cosmosdb.Driver) []map[string]any {
	t.Helper()
	var out []map[string]any
	pager := d.Container().NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Items {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestBatchAndScope covers GetFiles (ReadManyItems) and ReadScope bounds,
// which the store's search uses only in some modes.
func TestBatchAndScope(t *testing.T) {
	db := newDatabase(t)
	d := db.newDriver(t)
	ctx := t.Context()
	files := []driver.File{
		{Path: "t/main/a.md", Content: "alpha", Version: "v1"},
		{Path: "t/main/b.md", Content: strings.Repeat("😀", 10), Version: "v2"},
		{Path: "t/main/c.md", Content: "é" + strings.Repeat("😀", 2), Version: "v3"},
		{Path: "t/main/d.md", Version: "v4", Tombstone: true},
		{Path: "t/main/sub/e.md", Content: "nested", Version: "v5"},
		{Path: "u/main/a.md", Content: "other tenant", Version: "v6"},
		{Path: "root.md", Content: "root", Version: "v7"},
	}
	for _, f := range files {
		if err := d.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.GetFiles(ctx, []string{"t/main/a.md", "u/main/a.md", "t/main/d.md", "missing.md", "root.md"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path+"="+f.Version)
	}
	slices.Sort(paths)
	if want := "[root.md=v7 t/main/a.md=v1 t/main/d.md=v4 u/main/a.md=v6]"; fmt.Sprint(paths) != want {
		t.Fatalf("GetFiles = %v, want %v", paths, want)
	}
	sc, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "t/main/", Limit: 10, MaxChars: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := "[{t/main/a.md alp true v1 { }} {t/main/b.md 😀😀😀 true v2 { }} {t/main/c.md é😀😀 false v3 { }}]" // no lifetimes
	if fmt.Sprint(sc) != want {
		t.Fatalf("ReadScope = %v, want %v", sc, want)
	}
	sc, err = d.ReadScope(ctx, driver.ScopeParams{Prefix: "t/main/", Limit: 1, MaxChars: 100})
	if err != nil || fmt.Sprint(sc) != "[{t/main/a.md alpha false v1 { }}]" {
		t.Fatalf("ReadScope limit 1 = %v, %v", sc, err)
	}
	sc, err = d.ReadScope(ctx, driver.ScopeParams{Prefix: "", Limit: 10, MaxChars: 100})
	if err != nil || fmt.Sprint(sc) != "[{root.md root false v7 { }}]" {
		t.Fatalf("ReadScope root = %v, %v", sc, err)
	}
}

// TestGetFilesRequests pins GetFiles' requests: a batch of point reads a
// partition and batchSize paths (one request for 100 present files), and
// one query more for a batch one of whose paths is missing, never one a
// path; what it returns is the same either way.
func TestGetFilesRequests(t *testing.T) {
	db := newDatabase(t)
	d, rq := db.countedDriver(t)
	ctx := t.Context()
	var paths []string
	for i := range 150 {
		p := fmt.Sprintf("t/main/n%03d.md", i)
		if err := d.CreateFile(ctx, driver.File{Path: p, Content: "note " + p, Version: fmt.Sprint("v", i)}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	read := func(what string, paths []string, requests int64, want int) {
		t.Helper()
		before := rq.count()
		got, err := d.GetFiles(ctx, paths)
		if err != nil {
			t.Fatal(err)
		}
		if n := rq.count() - before; n != requests {
			t.Errorf("%s: %d requests, want %d", what, n, requests)
		}
		if len(got) != want {
			t.Fatalf("%s: %d files, want %d", what, len(got), want)
		}
		for _, f := range got {
			if f.Content != "note "+f.Path {
				t.Fatalf("%s: %s holds %q", what, f.Path, f.Content)
			}
		}
	}
	read("100 present", paths[:100], 1, 100)
	read("150 present", paths, 2, 150)
	read("99 present and one missing", append(slices.Clone(paths[:99]), "t/main/gone.md"), 2, 99)
	read("none present", []string{"t/main/gone.md", "t/main/away.md"}, 2, 0)
}

// TestReadScopePages: a scope bigger than one page (1,000 files) is read
// whole, in path order, in one query a page, and a limit cuts it.
func TestReadScopePages(t *testing.T) {
	db := newDatabase(t)
	d, rq := db.countedDriver(t)
	ctx := t.Context()
	const n = 2050
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				p := fmt.Sprintf("t/main/n%04d.md", i)
				if err := d.CreateFile(ctx, driver.File{Path: p, Content: p, Version: "v"}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, f := range []driver.File{{Path: "t/main/n0500.mdx", Version: "v", Tombstone: true}, {Path: "t/main/sub/x.md", Content: "x", Version: "v"}} {
		if err := d.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ limit, want, requests int }{{5000, n, 3}, {1500, 1500, 2}, {1000, 1000, 1}} {
		before := rq.count()
		sc, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "t/main/", Limit: c.limit, MaxChars: 100})
		if err != nil {
			t.Fatal(err)
		}
		if got := rq.count() - before; got != int64(c.requests) {
			t.Errorf("limit %d: %d requests, want %d", c.limit, got, c.requests)
		}
		if len(sc) != c.want {
			t.Fatalf("limit %d: %d files, want %d", c.limit, len(sc), c.want)
		}
		for i, f := range sc {
			if want := fmt.Sprintf("t/main/n%04d.md", i); f.Path != want || f.Content != want {
				t.Fatalf("limit %d: file %d is %s (%q), want %s", c.limit, i, f.Path, f.Content, want)
			}
		}
	}
}

// TestNew covers container checks.
func TestNew(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	if _, err := cosmosdb.New(ctx, db.client, db.name, "absent", &cosmosdb.Options{NoCreate: true}); err == nil {
		t.Fatal("NoCreate on a missing container succeeded")
	}
	d := db.newDriver(t) // creates the database
	dbc, err := db.client.NewDatabase(db.name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbc.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "by-id",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/id"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cosmosdb.New(ctx, db.client, db.name, "by-id", nil); err == nil {
		t.Fatal("a container partitioned on /id was accepted")
	}
	if _, err := cosmosdb.New(ctx, db.client, db.name, d.Container().ID(), nil); err != nil {
		t.Fatalf("New over an existing container: %v", err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "bad.md", Content: "\xff", Version: "v"}); err == nil || errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
}

// TestRealCosmosTTLExpiry needs a real Cosmos DB account: the local test
// server ignores per-item ttl (it keeps expired items forever), so this
// test runs only with AGENTMEM_COSMOS_REAL=1 and the endpoint and key of a
// real account in AGENTMEM_COSMOS_ENDPOINT and AGENTMEM_COSMOS_KEY.
func TestRealCosmosTTLExpiry(t *testing.T) {
	if os.Getenv("AGENTMEM_COSMOS_REAL") != "1" {
		t.Skip("real Cosmos DB only: the local server ignores ttl; set AGENTMEM_COSMOS_REAL=1 with a real account's endpoint and key")
	}
	db := newDatabase(t)
	d := db.newDriver(t)
	ctx := t.Context()
	exp := time.Now().Add(2 * time.Second)
	if err := d.CreateFile(ctx, driver.File{Path: "t/x.md", Version: "v1", Tombstone: true, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "op", Fingerprint: "fp", Kind: driver.KindWrite, Path: "t/x.md", Version: "v1", CreatedAt: time.Now(), ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "t/kept.md", Content: "kept", Version: "v2"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, ferr := d.GetFile(ctx, "t/x.md")
		r, rerr := d.GetReceipt(ctx, "op")
		if ferr != nil || rerr != nil {
			t.Fatal(ferr, rerr)
		}
		if f == nil && r == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not expired 30 s after ExpiresAt: tombstone %v, receipt %v", f != nil, r != nil)
		}
		time.Sleep(time.Second)
	}
	if f, err := d.GetFile(ctx, "t/kept.md"); err != nil || f == nil {
		t.Fatalf("a file without ExpiresAt expired: %v", err)
	}
}

// TestNewArguments checks that New refuses a nil context, a nil client
// and empty database and container names with errors wrapping
// store.ErrNilArgument, before any request (no emulator needed), and never
// panics.
func TestNewArguments(t *testing.T) {
	client, err := azcosmos.NewClientFromConnectionString("AccountEndpoint=https://127.0.0.1:1/;AccountKey=a2V5;", nil)
	if err != nil {
		t.Fatal(err)
	}
	var noCtx context.Context // nil: the case under test
	for _, c := range []struct {
		ctx                 context.Context
		client              *azcosmos.Client
		database, container string
	}{
		{noCtx, client, "db", "c"},
		{t.Context(), nil, "db", "c"},
		{t.Context(), nil, "", ""},
		{t.Context(), client, "", "c"},
		{t.Context(), client, "db", ""},
	} {
		d, err := cosmosdb.New(c.ctx, c.client, c.database, c.container, nil)
		if !errors.Is(err, store.ErrNilArgument) || d != nil {
			t.Errorf("New(ctx %v, client %v, %q, %q) = %v, %v; want store.ErrNilArgument", c.ctx != nil, c.client != nil, c.database, c.container, d, err)
		}
	}
}
