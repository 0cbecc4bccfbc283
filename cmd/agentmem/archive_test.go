package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// oldArchive builds an archive as the previous version of export wrote
// it: each entry's version and metadata in its PAX header (headerMeta,
// which a forger may change), the manifest last.
func oldArchive(t *testing.T, headerMeta string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	content := "- lives in Hanoi\n"
	md := map[string]string{"updated_by": "agent"}
	pax := map[string]string{paxVersion: "01V1", paxMeta: headerMeta}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "kamal/main/MEMORY.md", Mode: archiveFileMode,
		Size: int64(len(content)), Format: tar.FormatPAX, PAXRecords: pax}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(content))
	m := manifest{Format: manifestType, Prefix: "kamal/", Files: []manifestEntry{
		{Path: "kamal/main/MEMORY.md", Version: "01V1", Bytes: len(content), SHA256: sha(content), Metadata: md}}}
	b, _ := json.Marshal(m)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: archiveFileMode, Size: int64(len(b))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(b)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive of the previous version still imports, with the manifest's
// metadata; one whose entry header carries other metadata than the
// manifest (a forged updated_by) is refused as damaged.
func TestCheckArchiveEarlierFormat(t *testing.T) {
	man, err := checkArchive(bytes.NewReader(oldArchive(t, `{"updated_by":"agent"}`)))
	if err != nil {
		t.Fatalf("archive of the earlier format: %v", err)
	}
	if got := man.Files[0].Metadata["updated_by"]; got != "agent" {
		t.Errorf("updated_by = %q, want agent", got)
	}
	_, err = checkArchive(bytes.NewReader(oldArchive(t, `{"updated_by":"mallory"}`)))
	if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "differs from the manifest") {
		t.Fatalf("forged header: err = %v (exit %d), want a damaged archive, exit 2", err, exitCode(err))
	}
}
