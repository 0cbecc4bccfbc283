package archive

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

const (
	// ManifestName is the name of an archive's last entry. It is a
	// reserved store path (store.ReservedSegmentPrefix), so it never
	// collides with a memory file.
	ManifestName = ".agentmem-manifest.json"
	// Format is the manifest's format tag.
	Format = "agentmem-export/v1"
	// FileMode is the permission bits of every entry.
	FileMode = 0o644
)

// The PAX records of the earlier format, checked against the manifest
// when an archive carries them.
const (
	paxVersion = "AGENTMEM.version"
	paxMeta    = "AGENTMEM.metadata"
)

// wholeFile is the bound of a read that wants the whole file.
const wholeFile = math.MaxInt32

// Manifest describes an archive; it is its last entry, as JSON.
type Manifest struct {
	// Format is [Format].
	Format string `json:"format"`
	// Prefix is the store prefix that was exported ("" = everything).
	Prefix string `json:"prefix"`
	// Files lists the archive's files in the order of their entries.
	Files []Entry `json:"files"`
}

// Entry describes one file of an archive.
type Entry struct {
	// Path is the file's store path, also its entry's name.
	Path string `json:"path"`
	// Version is the file's version when it was exported.
	Version string `json:"version"`
	// Bytes is the size of the content in bytes.
	Bytes int `json:"bytes"`
	// SHA256 is the hex SHA-256 of the content.
	SHA256 string `json:"sha256"`
	// Metadata is the file's metadata; the import writes it with the
	// content.
	Metadata map[string]string `json:"metadata,omitempty"`
	// ExpiresAt is when the file expires (store.File.ExpiresAt, RFC 3339
	// in UTC); absent for never. The import gives the file this expiry,
	// and skips a file whose expiry has passed by the store's clock.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Pinned reports a pinned file (store.File.Pinned); the import pins it.
	Pinned bool `json:"pinned,omitempty"`
}

// Errors of an archive that [Import] refuses; nothing was written.
var (
	// ErrEmpty is an input without a single tar entry.
	ErrEmpty = errors.New("archive: the input is empty: give an archive made by agentmem export")
	// ErrNotArchive is an input that is not a tar archive of regular
	// files ending with an agentmem manifest.
	ErrNotArchive = errors.New("archive: not a readable tar archive")
	// ErrDamaged is an archive that does not match its manifest, or has
	// none (one cut short before it).
	ErrDamaged = errors.New("archive: the archive is damaged or was not made by agentmem export; nothing was written")
	// ErrOutsidePrefix is an archive holding a file outside
	// ImportOptions.Prefix.
	ErrOutsidePrefix = errors.New("archive: a file lies outside the prefix it may be imported under; nothing was written")
	// ErrTooLarge is an archive over ImportOptions.MaxBytes.
	ErrTooLarge = errors.New("archive: the archive is over the size limit; nothing was written")
)

// ErrNilArgument is a call without its store, reader or writer.
var ErrNilArgument = errors.New("archive: a required argument is nil: pass a store and a reader or writer")

// refusal is an error of kind (one of the sentinels above) about detail:
// "archive: <detail>: <the kind's text>".
type refusal struct {
	detail string
	kind   error
	cause  error // the underlying failure, if any (a store path error)
}

func (e *refusal) Error() string {
	return "archive: " + e.detail + ": " + strings.TrimPrefix(e.kind.Error(), "archive: ")
}

func (e *refusal) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

func refuse(kind error, format string, args ...any) error {
	return &refusal{detail: fmt.Sprintf(format, args...), kind: kind}
}

// digestHex is the hex SHA-256 of b.
func digestHex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Writer writes an archive: [Writer.Add] for each file, then
// [Writer.Close], which writes the manifest. An archive whose Close was
// not reached has no manifest and is refused by [Import].
type Writer struct {
	tw   *tar.Writer
	man  Manifest
	now  time.Time
	seen map[string]bool
	done bool
}

// NewWriter returns a Writer of an archive of the files under prefix
// (recorded in the manifest) to w.
func NewWriter(w io.Writer, prefix string) *Writer {
	return &Writer{tw: tar.NewWriter(w), man: Manifest{Format: Format, Prefix: prefix, Files: []Entry{}},
		now: time.Now().Truncate(time.Second), seen: map[string]bool{}}
}

// Add writes f (its whole content, as store.Store.Read returns it) as
// the archive's next entry. It refuses a nil or truncated file, an
// invalid path and a path added before.
func (w *Writer) Add(f *store.File) error {
	switch {
	case w.done:
		return errors.New("archive: Add after Close")
	case f == nil:
		return errors.New("archive: Add needs a file: got nil")
	case f.Truncated:
		return fmt.Errorf("archive: %s: Add needs the whole file: read it without a bound", f.Path)
	case w.seen[f.Path]:
		return fmt.Errorf("archive: %s: added twice", f.Path)
	}
	if err := store.ValidatePath(f.Path); err != nil {
		return fmt.Errorf("archive: %s: %w", f.Path, err)
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: FileMode, Size: int64(len(f.Content)), ModTime: w.now}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.WriteString(w.tw, f.Content); err != nil {
		return err
	}
	w.seen[f.Path] = true
	e := Entry{Path: f.Path, Version: f.Version, Bytes: len(f.Content), SHA256: digestHex([]byte(f.Content)),
		Metadata: f.Metadata, Pinned: f.Pinned}
	if !f.ExpiresAt.IsZero() {
		e.ExpiresAt = f.ExpiresAt.UTC()
	}
	w.man.Files = append(w.man.Files, e)
	return nil
}

// Len is the number of files added.
func (w *Writer) Len() int { return len(w.man.Files) }

// Close writes the manifest and ends the archive. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	b, err := json.MarshalIndent(w.man, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: FileMode, Size: int64(len(b)), ModTime: w.now}); err != nil {
		return err
	}
	if _, err := w.tw.Write(b); err != nil {
		return err
	}
	return w.tw.Close()
}

// ExportOptions configures [Export]; nil means the defaults.
type ExportOptions struct {
	// Timeout bounds each store request; 0 means none (ctx alone).
	Timeout time.Duration
}

// Export writes every file under prefix (a plain string prefix, "" for
// all) to w as an archive, in path order, and returns how many files it
// wrote, each with its metadata, expiry and pin. A file deleted between
// the listing and its read is left out, and so is an expired one (the
// store shows it to no reader). On
// an error the archive is left without its manifest, so that it can
// never be taken for a whole one. It fails with store.ErrInvalidPath for
// an invalid prefix and store's errors for a failed read.
func Export(ctx context.Context, s *store.Store, prefix string, w io.Writer, opts *ExportOptions) (int, error) {
	if s == nil || w == nil {
		return 0, fmt.Errorf("%w (Export)", ErrNilArgument)
	}
	if err := store.ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	var o ExportOptions
	if opts != nil {
		o = *opts
	}
	aw := NewWriter(w, prefix)
	for p, err := range s.Walk(ctx, prefix, 0) {
		if err != nil {
			return 0, err
		}
		f, err := read(ctx, s, p, o.Timeout)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since listed
		}
		if err != nil {
			return 0, err
		}
		if err := aw.Add(f); err != nil {
			return 0, err
		}
	}
	return aw.Len(), aw.Close()
}

// within is ctx bounded by timeout (0 = none).
func within(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// read reads the whole file p, bounded by timeout.
func read(ctx context.Context, s *store.Store, p string, timeout time.Duration) (*store.File, error) {
	rctx, cancel := within(ctx, timeout)
	defer cancel()
	return s.Read(rctx, p, wholeFile)
}
