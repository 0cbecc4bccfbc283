package archive

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// DefaultMaxBytes bounds an archive by default (1 GiB).
const DefaultMaxBytes = 1 << 30

// ImportOptions configures [Import]; nil means the defaults.
type ImportOptions struct {
	// Prefix, when set, is a prefix every path of the archive must start
	// with (a console user's "<namespace>/"); an archive holding another
	// path is refused with [ErrOutsidePrefix].
	Prefix string
	// Force replaces a file that differs from the archive (compare-and-swap
	// on the version just read); without it such a file is left as it is
	// and listed in ImportStats.Differ.
	Force bool
	// Operation, when set, makes the import exactly once: each file is
	// written under an operation whose id is Operation.ID plus a digest of
	// the path, and whose fingerprint digests Operation.Fingerprint, the
	// path, the content and the metadata. A retried import with the same
	// Operation applies each file once (its replay is counted as it was
	// first counted, and in Replayed); the same id with another archive is
	// refused with store.ErrOperationConflict for a file written before.
	// Operation.ID must leave 65 of store.MaxOperationIDChars free.
	Operation *store.Operation
	// Metadata is set over the manifest's metadata of every file written:
	// the caller's own record of who imported it (store's metadata rules
	// apply to the result). Its keys are left out when comparing a file
	// with the archive, so a rerun by another caller still finds the file
	// unchanged.
	Metadata map[string]string
	// MaxBytes bounds the archive's size; a larger one is refused with
	// [ErrTooLarge]. 0 means [DefaultMaxBytes].
	MaxBytes int64
	// TempDir is the folder of the spool file; "" means os.TempDir().
	TempDir string
	// Timeout bounds each store request; 0 means none (ctx alone).
	Timeout time.Duration
}

// ImportStats counts what an import did.
type ImportStats struct {
	// Created counts the files that were absent and were written.
	Created int `json:"created"`
	// Replaced counts the files that differed and were replaced (Force).
	Replaced int `json:"replaced"`
	// Unchanged counts the files that already held the archive's content
	// and metadata.
	Unchanged int `json:"unchanged"`
	// Replayed counts the writes answered from an earlier attempt of the
	// same ImportOptions.Operation (also counted as created or replaced).
	Replayed int `json:"replayed"`
	// Differ lists the files that differ from the archive and were left
	// as they are (without Force), in archive order.
	Differ []string `json:"differ"`
	// Expired counts the files of the archive whose expiry had passed by
	// the store's clock: they were not written (whatever the store held
	// at their path is left as it is).
	Expired int `json:"expired"`
}

// Import writes the files of the archive r to s and counts what it did.
// It reads the whole archive first, spooled to a temporary file, and
// checks it against its manifest (see the package doc); a refused archive
// writes nothing and wraps [ErrEmpty], [ErrNotArchive], [ErrDamaged],
// [ErrOutsidePrefix] or [ErrTooLarge]. Then it writes each file in
// archive order with compare-and-swap; a file changed by another writer
// between its read and its write stops the import with store.ErrConflict
// (run it again: what was written stays, and reads back as unchanged).
// Files that differ without ImportOptions.Force are not an error: they
// are in ImportStats.Differ.
func Import(ctx context.Context, s *store.Store, r io.Reader, opts *ImportOptions) (ImportStats, error) {
	stats := ImportStats{Differ: []string{}}
	if s == nil || r == nil {
		return stats, fmt.Errorf("%w (Import)", ErrNilArgument)
	}
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Prefix != "" {
		if err := store.ValidatePrefix(o.Prefix); err != nil {
			return stats, err
		}
	}
	if op := o.Operation; op != nil && (op.ID == "" || len([]rune(op.ID))+65 > store.MaxOperationIDChars) {
		return stats, fmt.Errorf("%w: ImportOptions.Operation.ID must be 1-%d characters", store.ErrInvalidOperation, store.MaxOperationIDChars-65)
	}
	spool, err := os.CreateTemp(o.TempDir, "agentmem-import-*.tar")
	if err != nil {
		return stats, err
	}
	defer func() { spool.Close(); os.Remove(spool.Name()) }()
	in := &limited{r: r, left: o.MaxBytes}
	tee := io.TeeReader(in, spool)
	man, err := check(tee, &o)
	if err == nil {
		_, err = io.Copy(io.Discard, tee) // the rest, for the spool
	}
	if in.over {
		return stats, refuse(ErrTooLarge, "it is over %d bytes", o.MaxBytes)
	}
	if err != nil {
		return stats, err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return stats, err
	}
	byPath := make(map[string]*Entry, len(man.Files))
	for i := range man.Files {
		byPath[man.Files[i].Path] = &man.Files[i]
	}
	tr := tar.NewReader(spool)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return stats, nil
		}
		if err != nil {
			return stats, err
		}
		e := byPath[hdr.Name]
		if hdr.Typeflag != tar.TypeReg || e == nil {
			continue // a folder, or the manifest
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return stats, err
		}
		if !e.ExpiresAt.IsZero() && !e.ExpiresAt.After(s.Now()) {
			stats.Expired++ // expired since the export: absent, as an export now would leave it
			continue
		}
		if err := put(ctx, s, &o, hdr.Name, string(body), e, &stats); err != nil {
			return stats, err
		}
	}
}

// limited reads at most left bytes of r, and notes an input longer than
// that.
type limited struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// Check reads the whole archive r and returns its manifest if the archive
// can be imported as a whole (see the package doc); it writes nothing.
// Its errors are those of [Import]'s refusals.
func Check(r io.Reader) (*Manifest, error) {
	if r == nil {
		return nil, fmt.Errorf("%w (Check)", ErrNilArgument)
	}
	return check(r, &ImportOptions{})
}

// check is Check under o's Prefix and Metadata.
func check(r io.Reader, o *ImportOptions) (*Manifest, error) {
	tr := tar.NewReader(r)
	type seen struct {
		sha  string
		size int
	}
	files := map[string]seen{}
	headers := map[string]map[string]string{}
	var man *Manifest
	entries := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotArchive, err)
		}
		entries++
		if man != nil {
			return nil, refuse(ErrDamaged, "%s follows the manifest, which is the last entry of an export", hdr.Name)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, refuse(ErrNotArchive, "%s is not a regular file", hdr.Name)
		}
		body, err := io.ReadAll(tr)
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotArchive, err)
		}
		if hdr.Name == ManifestName {
			man = &Manifest{}
			if err := json.Unmarshal(body, man); err != nil || man.Format != Format {
				return nil, refuse(ErrNotArchive, "%s is not an %s manifest", ManifestName, Format)
			}
			continue
		}
		if _, dup := files[hdr.Name]; dup {
			return nil, refuse(ErrDamaged, "%s is in the archive twice", hdr.Name)
		}
		files[hdr.Name] = seen{digestHex(body), len(body)}
		if hdr.PAXRecords[paxVersion] != "" || hdr.PAXRecords[paxMeta] != "" {
			headers[hdr.Name] = hdr.PAXRecords
		}
	}
	if entries == 0 {
		return nil, ErrEmpty
	}
	if man == nil {
		return nil, refuse(ErrDamaged, "it has no %s (an export ends with it; was the archive cut short?)", ManifestName)
	}
	if len(man.Files) != len(files) {
		return nil, refuse(ErrDamaged, "the manifest lists %d files, the archive holds %d", len(man.Files), len(files))
	}
	listed := make(map[string]bool, len(man.Files))
	for _, e := range man.Files {
		f, ok := files[e.Path]
		switch {
		case listed[e.Path]:
			return nil, refuse(ErrDamaged, "the manifest lists %s twice", e.Path)
		case !ok:
			return nil, refuse(ErrDamaged, "the manifest lists %s, which the archive does not hold", e.Path)
		case f.sha != e.SHA256 || f.size != e.Bytes:
			return nil, refuse(ErrDamaged, "%s does not match its size and SHA-256 in the manifest", e.Path)
		}
		listed[e.Path] = true
		if err := store.ValidatePath(e.Path); err != nil {
			return nil, &refusal{detail: e.Path + ": invalid path", kind: ErrDamaged, cause: err}
		}
		if !strings.HasPrefix(e.Path, o.Prefix) {
			return nil, refuse(ErrOutsidePrefix, "%s is not under %q", e.Path, o.Prefix)
		}
		if err := store.ValidateMetadata(e.Metadata); err != nil {
			return nil, refuse(ErrDamaged, "%s: the manifest's metadata is invalid (%v)", e.Path, err)
		}
		if err := store.ValidateMetadata(stamped(e.Metadata, o.Metadata)); err != nil {
			return nil, &refusal{detail: e.Path + ": its metadata with the importer's is invalid", kind: ErrDamaged, cause: err}
		}
		if e.Pinned && !e.ExpiresAt.IsZero() {
			return nil, &refusal{detail: e.Path + ": the manifest both pins it and gives it an expiry", kind: ErrDamaged,
				cause: store.ErrInvalidLifetime}
		}
		if pax, ok := headers[e.Path]; ok {
			var md map[string]string
			if js := pax[paxMeta]; js != "" {
				if err := json.Unmarshal([]byte(js), &md); err != nil {
					return nil, refuse(ErrDamaged, "%s: unreadable metadata in its header", e.Path)
				}
			}
			if pax[paxVersion] != e.Version || !sameMetadata(md, e.Metadata, nil) {
				return nil, refuse(ErrDamaged, "%s: the version or metadata in its header differs from the manifest's", e.Path)
			}
		}
	}
	return man, nil
}

// stamped is md with over set over it; nil when both are empty.
func stamped(md, over map[string]string) map[string]string {
	if len(over) == 0 {
		return md
	}
	out := maps.Clone(md)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// sameMetadata reports whether a and b hold the same keys and values,
// leaving out the keys of ignore (nil and empty maps are the same).
func sameMetadata(a, b, ignore map[string]string) bool {
	n := 0
	for k, v := range a {
		if _, skip := ignore[k]; skip {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range b {
		if _, skip := ignore[k]; !skip {
			n--
		}
	}
	return n == 0
}

// put makes p hold content, the manifest's metadata (with o.Metadata
// over it) and the manifest's lifetime (e), and counts the outcome in
// stats. It first tries to create p: one request when p is absent, the
// usual case. If p exists, it reads it, leaves an identical file alone and
// replaces a different one only with o.Force (compare-and-swap on the
// version read); otherwise it lists p in stats.Differ.
func put(ctx context.Context, s *store.Store, o *ImportOptions, p, content string, e *Entry, stats *ImportStats) error {
	meta := stamped(e.Metadata, o.Metadata)
	op := fileOperation(o.Operation, p, content, meta, e)
	req := store.WriteRequest{Path: p, Content: content, Metadata: meta, Operation: op, ExpiresAt: e.ExpiresAt, Pinned: e.Pinned}
	m, err := write(ctx, s, o.Timeout, req)
	if err == nil {
		count(stats, m)
		return nil
	}
	if !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrOperationConflict) {
		return err
	}
	cur, err := read(ctx, s, p, o.Timeout)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return changedMeanwhile(p, err) // deleted since the create failed
	case err != nil:
		return err
	case cur.Content == content && sameMetadata(cur.Metadata, meta, o.Metadata) &&
		cur.ExpiresAt.Equal(e.ExpiresAt) && cur.Pinned == e.Pinned:
		stats.Unchanged++
		return nil
	case !o.Force:
		stats.Differ = append(stats.Differ, p)
		return nil
	}
	req.Expected = cur.Version
	m, err = write(ctx, s, o.Timeout, req)
	if errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict) {
		return changedMeanwhile(p, err)
	}
	if err != nil {
		return err
	}
	count(stats, m)
	return nil
}

func count(stats *ImportStats, m store.Mutation) {
	if m.Existed {
		stats.Replaced++
	} else {
		stats.Created++
	}
	if m.Replayed {
		stats.Replayed++
	}
}

// fileOperation is the operation of one file's write under op, nil
// without one. Its fingerprint names the file's lifetime (e) only when it
// has one, so a file without keeps the fingerprint it always had.
func fileOperation(op *store.Operation, p, content string, md map[string]string, e *Entry) *store.Operation {
	if op == nil {
		return nil
	}
	parts := []string{"agentmem archive import", op.Fingerprint, p, content}
	for _, k := range slices.Sorted(maps.Keys(md)) {
		parts = append(parts, k, md[k])
	}
	// Metadata keys never start with "agentmem:" (the store's own), so
	// these parts cannot be mistaken for a metadata pair.
	if !e.ExpiresAt.IsZero() {
		parts = append(parts, "agentmem:expires", e.ExpiresAt.UTC().Format(time.RFC3339Nano))
	}
	if e.Pinned {
		parts = append(parts, "agentmem:pinned", "true")
	}
	return &store.Operation{ID: op.ID + ":" + digestHex([]byte(p)), Fingerprint: digestParts(parts)}
}

// digestParts is the hex SHA-256 of parts, each length-prefixed.
func digestParts(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)) + ":" + p)
	}
	return digestHex([]byte(b.String()))
}

// write is one store write bounded by timeout.
func write(ctx context.Context, s *store.Store, timeout time.Duration, req store.WriteRequest) (store.Mutation, error) {
	wctx, cancel := within(ctx, timeout)
	defer cancel()
	return s.Write(wctx, req)
}

// changedMeanwhile explains a conflict of a file written concurrently.
func changedMeanwhile(p string, err error) error {
	return fmt.Errorf("archive: %s changed while it was being written; nothing was written to it: run the import again: %w", p, err)
}
