package archive

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

func newStore(t *testing.T, files map[string]string) *store.Store {
	t.Helper()
	s := store.New(newMemDriver(t), nil)
	for p, c := range files {
		md := map[string]string{"updated_by": "agent"}
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: c, Metadata: md}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func export(t *testing.T, s *store.Store, prefix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Export(t.Context(), s, prefix, &buf, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func content(t *testing.T, s *store.Store, p string) string {
	t.Helper()
	f, err := s.Read(t.Context(), p, wholeFile)
	if errors.Is(err, store.ErrNotFound) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.Content
}

// entries rebuilds an archive from a list of name/body pairs, as tar -c
// of an unpacked export would.
func entries(t *testing.T, kv ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i < len(kv); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: kv[i], Mode: FileMode, Size: int64(len(kv[i+1]))}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, kv[i+1])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unpack is the name/body pairs of an archive.
func unpack(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(hdr.PAXRecords) > 0 {
			t.Errorf("%s carries PAX records %v", hdr.Name, hdr.PAXRecords)
		}
		body, _ := io.ReadAll(tr)
		out = append(out, hdr.Name, string(body))
	}
}

func TestRoundTrip(t *testing.T) {
	src := newStore(t, map[string]string{"kamal/main/MEMORY.md": "- lives in Hanoi\n", "kamal/main/notes.md": "n\n", "lan/main/MEMORY.md": "x"})
	b := export(t, src, "kamal/")
	kv := unpack(t, b)
	if len(kv) != 6 || kv[0] != "kamal/main/MEMORY.md" || kv[2] != "kamal/main/notes.md" || kv[4] != ManifestName {
		t.Fatalf("entries %q", kv)
	}
	man, err := Check(bytes.NewReader(b))
	if err != nil || man.Prefix != "kamal/" || len(man.Files) != 2 || man.Files[0].Metadata["updated_by"] != "agent" {
		t.Fatalf("Check = %+v, %v", man, err)
	}
	dst := newStore(t, nil)
	st, err := Import(t.Context(), dst, bytes.NewReader(b), nil)
	if err != nil || st.Created != 2 || st.Unchanged != 0 || len(st.Differ) != 0 {
		t.Fatalf("Import = %+v, %v", st, err)
	}
	f, _ := dst.Read(t.Context(), "kamal/main/MEMORY.md", wholeFile)
	if f.Content != "- lives in Hanoi\n" || f.Metadata["updated_by"] != "agent" {
		t.Fatalf("imported %+v", f)
	}
	st, err = Import(t.Context(), dst, bytes.NewReader(b), nil)
	if err != nil || st.Created != 0 || st.Unchanged != 2 {
		t.Fatalf("rerun = %+v, %v", st, err)
	}
}

// A file that differs is reported and kept unless Force, which replaces
// it on the version read.
func TestDifferAndForce(t *testing.T) {
	b := export(t, newStore(t, map[string]string{"k/a.md": "archive\n", "k/b.md": "b\n"}), "")
	dst := newStore(t, map[string]string{"k/a.md": "mine\n"})
	st, err := Import(t.Context(), dst, bytes.NewReader(b), nil)
	if err != nil || st.Created != 1 || st.Replaced != 0 || len(st.Differ) != 1 || st.Differ[0] != "k/a.md" {
		t.Fatalf("Import = %+v, %v", st, err)
	}
	if got := content(t, dst, "k/a.md"); got != "mine\n" {
		t.Fatalf("a differing file was overwritten: %q", got)
	}
	st, err = Import(t.Context(), dst, bytes.NewReader(b), &ImportOptions{Force: true})
	if err != nil || st.Replaced != 1 || st.Unchanged != 1 || len(st.Differ) != 0 {
		t.Fatalf("Import(Force) = %+v, %v", st, err)
	}
	if got := content(t, dst, "k/a.md"); got != "archive\n" {
		t.Fatalf("after Force %q", got)
	}
}

// Every refused archive writes nothing, Force or not, and is errors.Is
// its sentinel.
func TestRefusedArchivesWriteNothing(t *testing.T) {
	good := export(t, newStore(t, map[string]string{"k/a.md": "a\n", "k/b.md": "b\n"}), "k/")
	kv := unpack(t, good)
	var man Manifest
	json.Unmarshal([]byte(kv[5]), &man)
	manifest := func(edit func(*Manifest)) string {
		m := man
		m.Files = append([]Entry(nil), man.Files...)
		edit(&m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	big := bytes.Repeat([]byte("x"), 10000)
	for _, tc := range []struct {
		name    string
		archive []byte
		opts    *ImportOptions
		want    error
		text    string
	}{
		{"content changed", entries(t, kv[0], kv[1], kv[2], "B\n", kv[4], kv[5]), nil, ErrDamaged,
			"archive: k/b.md does not match its size and SHA-256 in the manifest: the archive is damaged or was not made by agentmem export; nothing was written"},
		{"cut short", good[:1024], nil, ErrDamaged, "it has no .agentmem-manifest.json (an export ends with it; was the archive cut short?)"},
		{"no manifest", entries(t, kv[0], kv[1]), nil, ErrDamaged, "has no"},
		{"manifest not last", entries(t, kv[0], kv[1], kv[4], kv[5], kv[2], kv[3]), nil, ErrDamaged, "follows the manifest"},
		{"file twice", entries(t, kv[0], kv[1], kv[0], kv[1], kv[2], kv[3], kv[4], kv[5]), nil, ErrDamaged, "twice"},
		{"file not listed", entries(t, kv[0], kv[1], kv[2], kv[3], "k/c.md", "c", kv[4], kv[5]), nil, ErrDamaged, "lists 2 files, the archive holds 3"},
		{"listed file missing", entries(t, kv[0], kv[1], "k/c.md", "c", kv[4], kv[5]), nil, ErrDamaged, "does not hold"},
		{"invalid path", entries(t, kv[0], kv[1], "k/.agentmem/x", "b\n", kv[4], manifest(func(m *Manifest) { m.Files[1].Path = "k/.agentmem/x" })), nil, store.ErrInvalidPath, "invalid path"},
		{"invalid metadata", entries(t, kv[0], kv[1], kv[2], kv[3], kv[4], manifest(func(m *Manifest) { m.Files[1].Metadata = map[string]string{"x": "\x00"} })), nil, ErrDamaged, "metadata is invalid"},
		{"bad manifest", entries(t, kv[0], kv[1], kv[2], kv[3], kv[4], "{"), nil, ErrNotArchive, "is not an agentmem-export/v1 manifest"},
		{"garbage", []byte("- lives in Hanoi\n"), nil, ErrNotArchive, "not a readable tar archive"},
		{"empty", nil, nil, ErrEmpty, "the input is empty"},
		{"outside the prefix", good, &ImportOptions{Prefix: "other/"}, ErrOutsidePrefix, `k/a.md is not under "other/"`},
		{"too large", entries(t, "k/big.md", string(big)), &ImportOptions{MaxBytes: 4096}, ErrTooLarge, "over 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := newStore(t, map[string]string{"k/a.md": "mine\n"})
			opts := &ImportOptions{Force: true}
			if tc.opts != nil {
				opts = tc.opts
				opts.Force = true
			}
			st, err := Import(t.Context(), dst, bytes.NewReader(tc.archive), opts)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.want, tc.text)
			}
			if st.Created+st.Replaced+st.Unchanged != 0 || content(t, dst, "k/a.md") != "mine\n" || content(t, dst, "k/b.md") != "<absent>" {
				t.Fatalf("a refused archive wrote: %+v", st)
			}
		})
	}
}

// oldArchive builds an archive as the earlier export wrote it: each
// entry's version and metadata in its PAX header (headerMeta, which a
// forger may change), the manifest last.
func oldArchive(t *testing.T, headerMeta string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	c := "- lives in Hanoi\n"
	pax := map[string]string{paxVersion: "01V1", paxMeta: headerMeta}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "kamal/main/MEMORY.md", Mode: FileMode,
		Size: int64(len(c)), Format: tar.FormatPAX, PAXRecords: pax}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, c)
	m := Manifest{Format: Format, Prefix: "kamal/", Files: []Entry{{Path: "kamal/main/MEMORY.md", Version: "01V1",
		Bytes: len(c), SHA256: digestHex([]byte(c)), Metadata: map[string]string{"updated_by": "agent"}}}}
	b, _ := json.Marshal(m)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: FileMode, Size: int64(len(b))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(b)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive of the earlier format still imports, with the manifest's
// metadata; one whose entry header carries other metadata than the
// manifest (a forged updated_by) is refused as damaged.
func TestEarlierFormat(t *testing.T) {
	s := newStore(t, nil)
	st, err := Import(t.Context(), s, bytes.NewReader(oldArchive(t, `{"updated_by":"agent"}`)), nil)
	if err != nil || st.Created != 1 {
		t.Fatalf("archive of the earlier format: %+v, %v", st, err)
	}
	if f, _ := s.Read(t.Context(), "kamal/main/MEMORY.md", wholeFile); f.Metadata["updated_by"] != "agent" {
		t.Errorf("metadata %v, want updated_by=agent", f.Metadata)
	}
	_, err = Import(t.Context(), newStore(t, nil), bytes.NewReader(oldArchive(t, `{"updated_by":"mallory"}`)), nil)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "differs from the manifest") {
		t.Fatalf("forged header: err = %v, want ErrDamaged", err)
	}
}

// With an Operation, a retried import applies each file once: a file
// changed by someone else after the first attempt is not overwritten by
// the retry, even with Force; the same id with another archive is
// refused.
func TestImportExactlyOnce(t *testing.T) {
	b := export(t, newStore(t, map[string]string{"k/a.md": "archive\n"}), "")
	dst := newStore(t, nil)
	op := &store.Operation{ID: "import-1", Fingerprint: "f"}
	if st, err := Import(t.Context(), dst, bytes.NewReader(b), &ImportOptions{Operation: op}); err != nil || st.Created != 1 {
		t.Fatalf("first attempt: %+v, %v", st, err)
	}
	f, _ := dst.Read(t.Context(), "k/a.md", wholeFile)
	if f.OperationID == "" || !strings.HasPrefix(f.OperationID, "import-1:") {
		t.Fatalf("operation id %q", f.OperationID)
	}
	if _, err := dst.Write(t.Context(), store.WriteRequest{Path: "k/a.md", Content: "later\n", Expected: f.Version}); err != nil {
		t.Fatal(err)
	}
	st, err := Import(t.Context(), dst, bytes.NewReader(b), &ImportOptions{Operation: op, Force: true})
	if err != nil || st.Created != 1 || st.Replayed != 1 || st.Replaced != 0 {
		t.Fatalf("retry: %+v, %v", st, err)
	}
	if got := content(t, dst, "k/a.md"); got != "later\n" {
		t.Fatalf("the retry applied again: %q", got)
	}
	other := export(t, newStore(t, map[string]string{"k/a.md": "other\n"}), "")
	if _, err := Import(t.Context(), dst, bytes.NewReader(other), &ImportOptions{Operation: op, Force: true}); !errors.Is(err, store.ErrOperationConflict) {
		t.Fatalf("the same operation with another archive: %v, want ErrOperationConflict", err)
	}
	if _, err := Import(t.Context(), dst, bytes.NewReader(b), &ImportOptions{Operation: &store.Operation{ID: strings.Repeat("x", 500)}}); !errors.Is(err, store.ErrInvalidOperation) {
		t.Fatalf("a long operation id: %v", err)
	}
}

// Metadata is set over the manifest's; its keys do not make a file
// differ on a rerun by another importer.
func TestImportMetadata(t *testing.T) {
	b := export(t, newStore(t, map[string]string{"k/a.md": "a\n"}), "")
	dst := newStore(t, nil)
	if _, err := Import(t.Context(), dst, bytes.NewReader(b), &ImportOptions{Metadata: map[string]string{"updated_by": "alice", "client": "console"}}); err != nil {
		t.Fatal(err)
	}
	f, _ := dst.Read(t.Context(), "k/a.md", wholeFile)
	if f.Metadata["updated_by"] != "alice" || f.Metadata["client"] != "console" {
		t.Fatalf("metadata %v", f.Metadata)
	}
	st, err := Import(t.Context(), dst, bytes.NewReader(b), &ImportOptions{Metadata: map[string]string{"updated_by": "bob", "client": "api"}})
	if err != nil || st.Unchanged != 1 || len(st.Differ) != 0 {
		t.Fatalf("rerun by another importer: %+v, %v", st, err)
	}
	// Without Metadata, the importer's key makes the file differ from the
	// archive's (updated_by=agent).
	st, err = Import(t.Context(), dst, bytes.NewReader(b), nil)
	if err != nil || len(st.Differ) != 1 {
		t.Fatalf("rerun without metadata: %+v, %v", st, err)
	}
	huge := map[string]string{"x": strings.Repeat("y", 5000)}
	if _, err := Import(t.Context(), newStore(t, nil), bytes.NewReader(b), &ImportOptions{Metadata: huge}); !errors.Is(err, store.ErrInvalidMetadata) {
		t.Fatalf("metadata over the bound: %v", err)
	}
}

func TestNilArguments(t *testing.T) {
	s := newStore(t, nil)
	if _, err := Export(t.Context(), nil, "", io.Discard, nil); !errors.Is(err, ErrNilArgument) {
		t.Errorf("Export(nil store): %v", err)
	}
	if _, err := Export(t.Context(), s, "", nil, nil); !errors.Is(err, ErrNilArgument) {
		t.Errorf("Export(nil writer): %v", err)
	}
	if _, err := Import(t.Context(), s, nil, nil); !errors.Is(err, ErrNilArgument) {
		t.Errorf("Import(nil reader): %v", err)
	}
	if _, err := Check(nil); !errors.Is(err, ErrNilArgument) {
		t.Errorf("Check(nil): %v", err)
	}
	w := NewWriter(io.Discard, "")
	if err := w.Add(nil); err == nil {
		t.Error("Add(nil) succeeded")
	}
	if err := w.Add(&store.File{Path: "a.md", Content: "x", Truncated: true}); err == nil {
		t.Error("Add(truncated) succeeded")
	}
}
