package cosmosdb_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// hversion returns a 26-character version whose time-ordered part is n:
// a larger n is a later version.
func hversion(n int) string {
	return fmt.Sprintf("01J%023d", n)
}

func entry(path string, n int, pending bool) driver.HistoryEntry {
	now := time.Now().Truncate(time.Millisecond)
	return driver.HistoryEntry{
		Path: path, Version: hversion(n), Previous: hversion(n - 1), Kind: driver.KindWrite,
		OperationID: fmt.Sprint("op-", n), Metadata: map[string]string{"updated_by": "u", "": "empty"},
		Content: fmt.Sprintf("content %d ✓\n", n), Time: now, ExpiresAt: now.Add(time.Hour), Pending: pending,
	}
}

// keys returns the keys of entries.
func keys(entries []driver.HistoryEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Key())
	}
	return out
}

// TestHistoryItems covers the history items: every field round-trips,
// entries live in their file's partition with a ttl, long paths get a
// hashed id, and the conditions of PutHistory, CompleteHistory and
// DropHistory hold, also for a second process whose cache is empty.
func TestHistoryItems(t *testing.T) {
	db := newDatabase(t)
	d := db.newDriver(t)
	other := db.reopen(t, d)
	ctx := t.Context()
	long := strings.Repeat("s", 200) + "/" + strings.Repeat("t", 200) + "/x.md"
	for _, path := range []string{"t/main/a.md", "top.md", long} {
		e := entry(path, 2, true)
		if err := d.PutHistory(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := d.PutHistory(ctx, e); !errors.Is(err, driver.ErrPrecondition) {
			t.Fatalf("second put of %s: %v, want ErrPrecondition", path, err)
		}
		g, err := other.GetHistory(ctx, path, e.Version)
		if err != nil || g == nil {
			t.Fatalf("get %s: %+v, %v", path, g, err)
		}
		if !g.Time.Equal(e.Time) || !g.ExpiresAt.Equal(e.ExpiresAt) {
			t.Fatalf("times: %v, %v; want %v, %v", g.Time, g.ExpiresAt, e.Time, e.ExpiresAt)
		}
		gc, ec := *g, e
		gc.Time, gc.ExpiresAt, ec.Time, ec.ExpiresAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if fmt.Sprint(gc) != fmt.Sprint(ec) {
			t.Fatalf("round trip:\n%+v\nwant\n%+v", *g, e)
		}
		// Another version with the same key is not this one.
		if g, err := d.GetHistory(ctx, path, e.Version+"X"); err != nil || g != nil {
			t.Fatalf("get of another version with the same key: %+v, %v", g, err)
		}
		if g, err := d.GetHistory(ctx, path, hversion(3)); err != nil || g != nil {
			t.Fatalf("get of a missing version: %+v, %v", g, err)
		}
	}
	rows := rawItems(t, d)
	for _, it := range rows {
		if it["type"] != "history" {
			continue
		}
		id, file := it["id"].(string), it["file"].(string)
		if strings.Contains(id, "/") || strings.Contains(id, " ") || len(id) > 255 {
			t.Errorf("history id %q", id)
		}
		wantPK := map[string]string{"t/main/a.md": "t", "top.md": "/", long: strings.Repeat("s", 200)}[file]
		if it["pk"] != wantPK || it["path"] != driver.HistoryKey(file, hversion(2)) {
			t.Errorf("history item of %s: pk %v, path %v", file, it["pk"], it["path"])
		}
		if v, ok := it["ttl"].(float64); !ok || v < 3500 || v > 3601 {
			t.Errorf("history item of %s: ttl %v, want about an hour", file, it["ttl"])
		}
	}

	const path = "t/main/a.md"
	v := hversion(2)
	// Conditions, through a driver with the ETag cached and one without.
	if err := other.CompleteHistory(ctx, path, hversion(9)); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete of a missing entry: %v", err)
	}
	if err := other.CompleteHistory(ctx, path, v+"X"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete of another version with the same key: %v", err)
	}
	if err := other.DropHistory(ctx, path, hversion(9)); err != nil {
		t.Fatalf("drop of a missing entry: %v", err)
	}
	if err := d.CompleteHistory(ctx, path, v); err != nil { // cached ETag
		t.Fatal(err)
	}
	if err := other.CompleteHistory(ctx, path, v); err != nil { // already complete
		t.Fatal(err)
	}
	if g, err := other.GetHistory(ctx, path, v); err != nil || g == nil || g.Pending || g.Content != "content 2 ✓\n" {
		t.Fatalf("after completion: %+v, %v", g, err)
	}
	if err := other.DropHistory(ctx, path, v); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("drop of a complete entry: %v", err)
	}
	// The cached ETag of d went stale: other completes, d drops.
	e3 := entry(path, 3, true)
	if err := d.PutHistory(ctx, e3); err != nil {
		t.Fatal(err)
	}
	if err := other.CompleteHistory(ctx, path, e3.Version); err != nil {
		t.Fatal(err)
	}
	if err := d.DropHistory(ctx, path, e3.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("drop over a stale ETag of an entry completed since: %v", err)
	}
	e4 := entry(path, 4, true)
	if err := d.PutHistory(ctx, e4); err != nil {
		t.Fatal(err)
	}
	if err := other.DropHistory(ctx, path, e4.Version); err != nil {
		t.Fatal(err)
	}
	if err := d.CompleteHistory(ctx, path, e4.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete over a stale ETag of an entry dropped since: %v", err)
	}
	if err := d.DropHistory(ctx, path, e4.Version); err != nil {
		t.Fatalf("drop of an entry dropped since: %v", err)
	}
	for _, it := range rawItems(t, d) {
		if it["type"] == "history" && it["file"] == path && it["version"] == e3.Version {
			if v, ok := it["ttl"].(float64); !ok || v < 3500 || v > 3601 {
				t.Errorf("completed entry: ttl %v, want about an hour", it["ttl"])
			}
		}
	}
	// Files never list history entries.
	if es, err := d.ListFiles(ctx, driver.ListParams{Prefix: "", Limit: 10}); err != nil || len(es) != 0 {
		t.Fatalf("listing = %+v, %v", es, err)
	}
}

// TestListAndDeleteHistory covers ListHistory's order and pages in one
// partition, for a top-level file and across partitions, and
// DeleteHistory in several rounds.
func TestListAndDeleteHistory(t *testing.T) {
	db := newDatabase(t)
	d := db.newDriver(t)
	ctx := t.Context()
	var all []string
	put := func(path string, n int) {
		t.Helper()
		e := entry(path, n, false)
		if err := d.PutHistory(ctx, e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e.Key())
	}
	for _, path := range []string{"u/a.md", "u/a.md.bak", "u/b/c.md", "u-2/a.md", "u.md", "v/a.md"} {
		for n := 1; n <= 3; n++ {
			put(path, n)
		}
	}
	slices.Sort(all)
	under := func(prefix string) []string {
		var out []string
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				out = append(out, k)
			}
		}
		return out
	}
	list := func(prefix string, page int) []string {
		t.Helper()
		var out []string
		after := ""
		for range 100 {
			es, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: prefix, After: after, Limit: page})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) > page {
				t.Fatalf("%q: page of %d, limit %d", prefix, len(es), page)
			}
			out = append(out, keys(es)...)
			if len(es) < page {
				return out
			}
			after = es[len(es)-1].Key()
		}
		t.Fatalf("%q: the listing does not end", prefix)
		return nil
	}
	for _, prefix := range []string{"u/", "u/a.md ", "u/a.md", "u.md ", "u", "", "v/", "w/"} {
		for _, page := range []int{1, 2, 100} {
			if got, want := list(prefix, page), under(prefix); !slices.Equal(got, want) {
				t.Fatalf("history of %q in pages of %d:\n%v\nwant\n%v", prefix, page, got, want)
			}
		}
	}
	// Newest first within one file.
	es, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "u/a.md ", Limit: 10})
	if err != nil || len(es) != 3 || es[0].Version != hversion(3) || es[2].Version != hversion(1) {
		t.Fatalf("one file's history: %+v, %v", es, err)
	}

	// DeleteHistory: more entries than one round removes.
	for n := 10; n < 10+2*100+5; n++ {
		put("u/big.md", n)
	}
	n, err := d.DeleteHistory(ctx, "u/")
	if err != nil || n != 3*3+205 {
		t.Fatalf("DeleteHistory(u/) = %d, %v; want %d", n, err, 3*3+205)
	}
	if got := list("u/", 100); len(got) != 0 {
		t.Fatalf("after DeleteHistory(u/): %v", got)
	}
	if got := list("", 100); !slices.Equal(got, append(under("u-2/"), append(under("u.md"), under("v/")...)...)) {
		t.Fatalf("after DeleteHistory(u/) the rest is %v", got)
	}
	// A prefix across partitions.
	n, err = d.DeleteHistory(ctx, "u")
	if err != nil || n != 6 {
		t.Fatalf("DeleteHistory(u) = %d, %v; want 6", n, err)
	}
	if got := list("", 100); !slices.Equal(got, under("v/")) {
		t.Fatalf("after DeleteHistory(u) the rest is %v", got)
	}
}

// TestMutateHistory covers the entry in Mutate's batch: written with the
// change in the same single request, and not written when the change is
// refused (a stale version, a replay, a delete of an absent path).
func TestMutateHistory(t *testing.T) {
	db := newDatabase(t)
	d, rq := db.countedDriver(t)
	ctx := t.Context()
	const path = "u/h.md"
	mutate := func(what string, p driver.MutateParams, want int64) error {
		t.Helper()
		e := entry(path, 0, false)
		e.Kind, e.Version, e.Previous, e.Content = p.Kind, p.Version, p.Expected, p.Content
		if p.Kind == driver.KindDelete {
			e.Version = hversion(99)
		}
		p.History = &e
		before := rq.count()
		_, err := d.Mutate(ctx, p)
		if n := rq.count() - before; want > 0 && n != want {
			t.Fatalf("%s: %d requests, want %d", what, n, want)
		}
		return err
	}
	w := func(n, expected int, op string) driver.MutateParams {
		p := driver.MutateParams{Kind: driver.KindWrite, Path: path, Content: fmt.Sprint("c", n), Version: hversion(n)}
		if expected > 0 {
			p.Expected = hversion(expected)
		}
		if op != "" {
			p.Receipt = receipt(op, driver.KindWrite, path, p.Version, p.Expected)
		}
		return p
	}
	if err := mutate("create", w(1, 0, "op1"), 1); err != nil {
		t.Fatal(err)
	}
	if err := mutate("replace", w(2, 1, "op2"), 1); err != nil {
		t.Fatal(err)
	}
	if err := mutate("plain replace", w(3, 2, ""), 1); err != nil {
		t.Fatal(err)
	}
	if err := mutate("stale", w(4, 2, ""), 0); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale write: %v", err)
	}
	if err := mutate("replay", w(5, 3, "op2"), 0); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if err := mutate("create over a file", w(6, 0, ""), 0); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("create over a file: %v", err)
	}
	// The refused create dropped the cached ETag: a read, then the batch.
	if err := mutate("delete", driver.MutateParams{Kind: driver.KindDelete, Path: path, Expected: hversion(3)}, 2); err != nil {
		t.Fatal(err)
	}
	if err := mutate("delete of an absent path", driver.MutateParams{Kind: driver.KindDelete, Path: path, Receipt: receipt("op7", driver.KindDelete, path, "", "")}, 0); err != nil {
		t.Fatal(err)
	}
	es, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: path + " ", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%s %s<-%s %q", e.Kind, e.Version, e.Previous, e.Content))
	}
	want := []string{
		fmt.Sprintf("delete %s<-%s %q", hversion(99), hversion(3), ""),
		fmt.Sprintf("write %s<-%s %q", hversion(3), hversion(2), "c3"),
		fmt.Sprintf("write %s<-%s %q", hversion(2), hversion(1), "c2"),
		fmt.Sprintf("write %s<-%s %q", hversion(1), "", "c1"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
