package main

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/store"
)

// An export is a tar archive: one plain Markdown file per memory file, named
// by its store path, then ManifestName, which lists each file's version,
// size, SHA-256 and metadata. The entries carry no extended header of
// their own, so that tar lists and unpacks them without a warning; an
// archive made before (with paxVersion and paxMeta in each entry's PAX
// header) still imports, each header checked against the manifest.
const (
	// ManifestName is the archive's last entry; its name is a reserved
	// store path, so it never collides with a memory file.
	ManifestName    = ".agentmem-manifest.json"
	manifestType    = "agentmem-export/v1"
	paxVersion      = "AGENTMEM.version"
	paxMeta         = "AGENTMEM.metadata"
	archiveFileMode = 0o644
)

// manifest describes an export.
type manifest struct {
	Format string          `json:"format"`
	Prefix string          `json:"prefix"`
	Files  []manifestEntry `json:"files"`
}

// manifestEntry is one exported file.
type manifestEntry struct {
	Path     string            `json:"path"`
	Version  string            `json:"version"`
	Bytes    int               `json:"bytes"`
	SHA256   string            `json:"sha256"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// sameFile reports whether f holds content and metadata md (nil and empty
// metadata are the same).
func sameFile(f *store.File, content string, md map[string]string) bool {
	return f.Content == content && len(f.Metadata) == len(md) && maps.Equal(f.Metadata, md)
}

func (a *app) exportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export [PREFIX]",
		Short: "Write every file under PREFIX to a tar archive",
		Long: `export writes every file whose path starts with PREFIX (default: all) to a tar
archive on stdout, or to -o FILE: each file as a plain Markdown file named by
its path, then ` + ManifestName + ` (JSON: each path's version, size, SHA-256
and metadata). agentmem import reads it back; tar -x unpacks it.`,
		Example: "  agentmem export kamal/ -o kamal.tar\n  agentmem export | tar -t",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			prefix := ""
			if len(argv) == 1 {
				prefix = argv[0]
			}
			if err := store.ValidatePrefix(prefix); err != nil {
				return fileErr(prefix, err)
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				var n int
				var err error
				if out == "" {
					n, err = a.export(ctx, s, prefix, a.stdout)
				} else {
					n, err = a.exportFile(ctx, s, prefix, out)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "exported %d files\n", n)
				return nil
			})
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the archive to `FILE` instead of stdout")
	return c
}

// exportFile exports the files under prefix to a temporary file beside
// out, renamed over out only once complete: a failed export leaves out as
// it was (an earlier archive stays whole) and writes nothing there. An
// existing out keeps its permissions; through a symbolic link, the file
// it points to is replaced; a device or pipe (/dev/stdout) is written in
// place.
func (a *app) exportFile(ctx context.Context, s *store.Store, prefix, out string) (int, error) {
	if target, err := filepath.EvalSymlinks(out); err == nil {
		out = target
	}
	fi, statErr := os.Stat(out)
	if statErr == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(out, os.O_WRONLY, 0)
		if err != nil {
			return 0, err
		}
		n, err := a.export(ctx, s, prefix, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return n, err
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name()) // fails once renamed
	if statErr == nil {
		err = f.Chmod(fi.Mode().Perm())
	}
	n := 0
	if err == nil {
		n, err = a.export(ctx, s, prefix, f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out)
	}
	return n, err
}

// export writes the files under prefix to w as a tar archive and returns
// how many it wrote.
func (a *app) export(ctx context.Context, s *store.Store, prefix string, w io.Writer) (int, error) {
	tw := tar.NewWriter(w)
	m := manifest{Format: manifestType, Prefix: prefix, Files: []manifestEntry{}}
	now := time.Now().Truncate(time.Second)
	for p, err := range s.Walk(ctx, prefix, 0) {
		if err != nil {
			return 0, err
		}
		f, err := a.readFile(ctx, s, p)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since listed
		}
		if err != nil {
			return 0, err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: archiveFileMode, Size: int64(len(f.Content)), ModTime: now}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, err
		}
		if _, err := io.WriteString(tw, f.Content); err != nil {
			return 0, err
		}
		m.Files = append(m.Files, manifestEntry{Path: p, Version: f.Version, Bytes: len(f.Content), SHA256: sha(f.Content), Metadata: f.Metadata})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, err
	}
	b = append(b, '\n')
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: archiveFileMode, Size: int64(len(b)), ModTime: now}); err != nil {
		return 0, err
	}
	if _, err := tw.Write(b); err != nil {
		return 0, err
	}
	return len(m.Files), tw.Close()
}

// importReport counts what an import did.
type importReport struct {
	Created, Replaced, Unchanged int
	Conflicts                    []string
}

func (a *app) importCmd() *cobra.Command {
	var in string
	var force bool
	c := &cobra.Command{
		Use:   "import [-i FILE]",
		Short: "Read an archive made by agentmem export back into the store",
		Long: `import reads a tar archive made by agentmem export from stdin, or from -i FILE,
and writes each file with its metadata. A file that is absent is created; one
that already holds the same content and metadata is left alone, so a rerun
writes nothing. A file that differs is not overwritten (exit 3, listing them)
unless --force, which replaces it with compare-and-swap on the version it read.
The archive is checked whole against its manifest (each file listed once, with
its size and SHA-256; the manifest last) before anything is written, and each
file gets the metadata the manifest lists: a damaged archive, or one without
its manifest (cut short), writes nothing, with or without --force (exit 2).`,
		Example: "  agentmem import -i kamal.tar\n  agentmem --store file:backup export | agentmem import",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			r := a.stdin
			if in != "" {
				f, err := os.Open(in)
				if err != nil {
					return usagef("import: %v", err)
				}
				defer f.Close()
				r = f
			}
			return a.withStore(cmd, func(ctx context.Context, s *store.Store) error {
				rep, err := a.importArchive(ctx, s, r, force)
				fmt.Fprintf(a.stderr, "imported: %d created, %d replaced, %d unchanged, %d differ\n", rep.Created, rep.Replaced, rep.Unchanged, len(rep.Conflicts))
				if err != nil {
					return err
				}
				if len(rep.Conflicts) > 0 {
					for _, p := range rep.Conflicts {
						fmt.Fprintf(a.stderr, "differs: %s\n", p)
					}
					return withCode(exitConflict, fmt.Errorf("%d files differ from the archive and were left as they are: rerun with --force to replace them", len(rep.Conflicts)))
				}
				return nil
			})
		},
	}
	c.Flags().StringVarP(&in, "input", "i", "", "read the archive from `FILE` instead of stdin")
	c.Flags().BoolVar(&force, "force", false, "replace files that differ from the archive")
	return c
}

// importArchive writes the files of the archive r to s. The archive is
// read twice: first, spooled to a temporary file, to check it whole
// against its manifest (checkArchive), so that a damaged or unverifiable
// archive writes nothing; then from the spool, to write each file with the
// metadata the manifest gives it.
func (a *app) importArchive(ctx context.Context, s *store.Store, r io.Reader, force bool) (importReport, error) {
	var rep importReport
	spool, err := os.CreateTemp("", "agentmem-import-*.tar")
	if err != nil {
		return rep, err
	}
	defer func() { spool.Close(); os.Remove(spool.Name()) }()
	tee := io.TeeReader(r, spool)
	man, err := checkArchive(tee)
	if err != nil {
		return rep, err
	}
	if _, err := io.Copy(io.Discard, tee); err != nil { // the rest, for the spool
		return rep, err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return rep, err
	}
	byPath := make(map[string]*manifestEntry, len(man.Files))
	for i := range man.Files {
		byPath[man.Files[i].Path] = &man.Files[i]
	}
	tr := tar.NewReader(spool)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return rep, nil
		}
		if err != nil {
			return rep, err
		}
		e := byPath[hdr.Name]
		if hdr.Typeflag != tar.TypeReg || e == nil {
			continue // a folder, or the manifest
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return rep, err
		}
		switch outcome, err := a.put(ctx, s, hdr.Name, string(body), e.Metadata, force); {
		case err != nil:
			return rep, err
		case outcome == putCreated:
			rep.Created++
		case outcome == putReplaced:
			rep.Replaced++
		case outcome == putUnchanged:
			rep.Unchanged++
		default:
			rep.Conflicts = append(rep.Conflicts, hdr.Name)
		}
	}
}

// damaged is the error of an archive that does not match its manifest or
// has none: bad input (exit 2), and nothing was written.
func damaged(format string, args ...any) error {
	return withCode(exitUsage, fmt.Errorf("import: "+format+": the archive is damaged or was not made by agentmem export; nothing was written", args...))
}

// checkArchive reads the whole archive r and returns its manifest, after
// checking that it can be imported as a whole: a readable tar of regular
// files (and folders), the manifest its last entry, every file listed in
// it exactly once with the same size and SHA-256, nothing else, each path
// and each file's metadata valid, and (in an archive of an earlier
// version) each entry's own version and metadata header equal to the
// manifest's. An archive with no manifest, such as one cut short before
// it, cannot be verified and is refused.
func checkArchive(r io.Reader) (*manifest, error) {
	tr := tar.NewReader(r)
	type seen struct {
		sha  string
		size int
	}
	files := map[string]seen{}
	headers := map[string]map[string]string{}
	var man *manifest
	entries := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("import: not a readable tar archive: %w", err))
		}
		entries++
		if man != nil {
			return nil, damaged("%s follows the manifest, which is the last entry of an export", hdr.Name)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, withCode(exitUsage, fmt.Errorf("import: %s is not a regular file", hdr.Name))
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("import: not a readable tar archive: %w", err))
		}
		if hdr.Name == ManifestName {
			man = &manifest{}
			if err := json.Unmarshal(body, man); err != nil || man.Format != manifestType {
				return nil, withCode(exitUsage, fmt.Errorf("import: %s is not an %s manifest", ManifestName, manifestType))
			}
			continue
		}
		if _, dup := files[hdr.Name]; dup {
			return nil, damaged("%s is in the archive twice", hdr.Name)
		}
		files[hdr.Name] = seen{sha(string(body)), len(body)}
		if hdr.PAXRecords[paxVersion] != "" || hdr.PAXRecords[paxMeta] != "" {
			headers[hdr.Name] = hdr.PAXRecords
		}
	}
	if entries == 0 {
		return nil, withCode(exitUsage, errors.New("import: the input is empty: give an archive made by agentmem export"))
	}
	if man == nil {
		return nil, damaged("it has no %s (an export ends with it; was the archive cut short?)", ManifestName)
	}
	if len(man.Files) != len(files) {
		return nil, damaged("the manifest lists %d files, the archive holds %d", len(man.Files), len(files))
	}
	listed := make(map[string]bool, len(man.Files))
	for _, e := range man.Files {
		f, ok := files[e.Path]
		switch {
		case listed[e.Path]:
			return nil, damaged("the manifest lists %s twice", e.Path)
		case !ok:
			return nil, damaged("the manifest lists %s, which the archive does not hold", e.Path)
		case f.sha != e.SHA256 || f.size != e.Bytes:
			return nil, damaged("%s does not match its size and SHA-256 in the manifest", e.Path)
		}
		listed[e.Path] = true
		if err := store.ValidatePath(e.Path); err != nil {
			return nil, fileErr(e.Path, err)
		}
		if err := store.ValidateMetadata(e.Metadata); err != nil {
			return nil, damaged("%s: the manifest's metadata is invalid (%v)", e.Path, err)
		}
		if pax, ok := headers[e.Path]; ok {
			var md map[string]string
			if js := pax[paxMeta]; js != "" {
				if err := json.Unmarshal([]byte(js), &md); err != nil {
					return nil, damaged("%s: unreadable metadata in its header", e.Path)
				}
			}
			if pax[paxVersion] != e.Version || len(md) != len(e.Metadata) || !maps.Equal(md, e.Metadata) {
				return nil, damaged("%s: the version or metadata in its header differs from the manifest's", e.Path)
			}
		}
	}
	return man, nil
}

// putOutcome is what put did.
type putOutcome int

const (
	putCreated putOutcome = iota
	putReplaced
	putUnchanged
	putDiffers
)

// put makes p hold content and md. It first tries to create p: one request
// when p is absent, the usual case of a first import or migration. If p
// exists, it reads it, leaves an identical file alone and replaces a
// different one only when replace is set (compare-and-swap on the version
// it read); otherwise it reports putDiffers.
func (a *app) put(ctx context.Context, s *store.Store, p, content string, md map[string]string, replace bool) (putOutcome, error) {
	err := a.writeCAS(ctx, s, p, content, md, "")
	if err == nil {
		return putCreated, nil
	}
	if !errors.Is(err, store.ErrConflict) {
		return 0, err
	}
	cur, err := a.readFile(ctx, s, p)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, changedMeanwhile(p, err) // deleted since the create failed
	case err != nil:
		return 0, err
	case sameFile(cur, content, md):
		return putUnchanged, nil
	case !replace:
		return putDiffers, nil
	}
	if err := a.writeCAS(ctx, s, p, content, md, cur.Version); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return 0, changedMeanwhile(p, err)
		}
		return 0, err
	}
	return putReplaced, nil
}

// writeCAS writes content and md at p if its version is expected, bounded
// by --timeout; a conflict is returned as the store's ErrConflict.
func (a *app) writeCAS(ctx context.Context, s *store.Store, p, content string, md map[string]string, expected string) error {
	wctx, cancel := a.request(ctx)
	defer cancel()
	_, err := s.Write(wctx, store.WriteRequest{Path: p, Content: content, Expected: expected, Metadata: md})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fileErr(p, deadline(err, a.timeout))
	}
	return err
}

// changedMeanwhile explains a conflict of a file written concurrently.
func changedMeanwhile(p string, err error) error {
	return fmt.Errorf("%s changed while it was being written; nothing was written to it: run the command again: %w", p, err)
}
