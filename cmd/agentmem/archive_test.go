package main

import (
	"bytes"
	"testing"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/store"
)

// import maps every archive that core/archive refuses to exit 2 (bad
// input, nothing written), and an export of a store reads back whole.
func TestImportArchiveExitCodes(t *testing.T) {
	a := &app{}
	src := store.New(newMemDriver(t), nil)
	if _, err := src.Write(t.Context(), store.WriteRequest{Path: "k/a.md", Content: "a\n"}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := a.export(t.Context(), src, "k/", &buf); err != nil || n != 1 {
		t.Fatalf("export = %d, %v", n, err)
	}
	good := buf.Bytes()
	for name, in := range map[string][]byte{"empty": nil, "garbage": []byte("not a tar"), "cut short": good[:512]} {
		_, err := a.importArchive(t.Context(), store.New(newMemDriver(t), nil), bytes.NewReader(in), true)
		if exitCode(err) != exitUsage {
			t.Errorf("%s: err = %v (exit %d), want exit 2", name, err, exitCode(err))
		}
	}
	rep, err := a.importArchive(t.Context(), store.New(newMemDriver(t), nil), bytes.NewReader(good), false)
	if err != nil || rep.Created != 1 {
		t.Fatalf("import = %+v, %v", rep, err)
	}
	if _, err := archive.Check(bytes.NewReader(good)); err != nil {
		t.Fatalf("Check(export) = %v", err)
	}
}
