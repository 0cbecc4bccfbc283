package driver_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

// fakeRows is a result set of snapshot rows, failing with err at the end.
type fakeRows struct {
	rows []fakeRow
	i    int
	err  error
}

type fakeRow struct {
	isFile bool
	f      driver.File
	l      driver.Lifetime
}

func (r *fakeRows) Next() bool { r.i++; return r.i <= len(r.rows) }
func (r *fakeRows) Err() error { return r.err }
func (r *fakeRows) scan(isFile *bool, l *driver.Lifetime) (*driver.File, error) {
	row := r.rows[r.i-1]
	f := row.f
	*isFile, *l = row.isFile, row.l
	return &f, nil
}

func TestCollectSnapshot(t *testing.T) {
	rows := &fakeRows{rows: []fakeRow{
		{f: driver.File{Path: "b.md", Version: "ignored"}, l: driver.Lifetime{Pinned: "true"}},
		{isFile: true, f: driver.File{Path: "x.md", Content: "hello", Version: "v1"}},
		{f: driver.File{Path: "a.md", Tombstone: true}},
	}}
	file, entries, err := driver.CollectSnapshot(rows, rows.scan)
	if err != nil {
		t.Fatal(err)
	}
	if file == nil || file.Path != "x.md" || file.Content != "hello" || file.Version != "v1" {
		t.Errorf("file = %+v, want x.md at v1", file)
	}
	want := []driver.Entry{{Path: "a.md", Tombstone: true}, {Path: "b.md", Lifetime: driver.Lifetime{Pinned: "true"}}}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("entries = %+v, want %+v (sorted, only path, tombstone and lifetime)", entries, want)
	}

	empty := &fakeRows{}
	if file, entries, err := driver.CollectSnapshot(empty, empty.scan); file != nil || entries != nil || err != nil {
		t.Errorf("no rows: %v, %v, %v; want nil, nil, nil", file, entries, err)
	}

	boom := errors.New("boom")
	failing := &fakeRows{rows: rows.rows, err: boom}
	if _, _, err := driver.CollectSnapshot(failing, failing.scan); !errors.Is(err, boom) {
		t.Errorf("rows.Err: got %v, want %v", err, boom)
	}
	_, _, err = driver.CollectSnapshot(&fakeRows{rows: rows.rows}, func(*bool, *driver.Lifetime) (*driver.File, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Errorf("scan error: got %v, want %v", err, boom)
	}
}

func TestMetadataJSON(t *testing.T) {
	for _, m := range []map[string]string{nil, {}} {
		if v, err := driver.MetadataJSON(m); v != nil || err != nil {
			t.Errorf("MetadataJSON(%v) = %v, %v; want nil (SQL NULL)", m, v, err)
		}
	}
	v, err := driver.MetadataJSON(map[string]string{"b": "2", "a": `"1"`})
	if err != nil || v != `{"a":"\"1\"","b":"2"}` {
		t.Errorf("MetadataJSON = %#v, %v; want the JSON object with sorted keys", v, err)
	}
}
