package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/store"
)

// export and import read and write the archive format of core/archive: one
// plain Markdown file per memory file, named by its store path, then
// archive.ManifestName, which lists each file's version, size, SHA-256 and
// metadata.

func (a *app) exportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export [PREFIX]",
		Short: "Write every file under PREFIX to a tar archive",
		Long: `export writes every file whose path starts with PREFIX (default: all) to a tar
archive on stdout, or to -o FILE: each file as a plain Markdown file named by
its path, then ` + archive.ManifestName + ` (JSON: each path's version, size, SHA-256
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

// export writes the files under prefix to w as an archive
// (archive.Export, each request bounded by --timeout) and returns how
// many it wrote.
func (a *app) export(ctx context.Context, s *store.Store, prefix string, w io.Writer) (int, error) {
	n, err := archive.Export(ctx, s, prefix, w, &archive.ExportOptions{Timeout: a.timeout})
	return n, deadline(err, a.timeout)
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
		Args: func(cmd *cobra.Command, argv []string) error {
			if len(argv) > 0 {
				return usagef("import takes no argument, got %q: it reads the archive from stdin or -i FILE (agentmem import -i %s)", argv[0], argv[0])
			}
			return nil
		},
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
				if err != nil {
					// A refused archive wrote nothing: no summary of zeros
					// before the error. A failure part way says what landed.
					if rep.Created+rep.Replaced > 0 {
						fmt.Fprintf(a.stderr, "imported before the error: %d created, %d replaced, %d unchanged\n", rep.Created, rep.Replaced, rep.Unchanged)
					}
					return err
				}
				fmt.Fprintf(a.stderr, "imported: %d created, %d replaced, %d unchanged, %d differ\n", rep.Created, rep.Replaced, rep.Unchanged, len(rep.Differ))
				if len(rep.Differ) > 0 {
					for _, p := range rep.Differ {
						fmt.Fprintf(a.stderr, "differs: %s\n", p)
					}
					return withCode(exitConflict, fmt.Errorf("%d files differ from the archive and were left as they are: rerun with --force to replace them", len(rep.Differ)))
				}
				return nil
			})
		},
	}
	c.Flags().StringVarP(&in, "input", "i", "", "read the archive from `FILE` instead of stdin")
	c.Flags().BoolVar(&force, "force", false, "replace files that differ from the archive")
	return c
}

// importArchive writes the files of the archive r to s (archive.Import,
// each request bounded by --timeout). An archive it refuses, having
// written nothing, is bad input (exit 2).
func (a *app) importArchive(ctx context.Context, s *store.Store, r io.Reader, force bool) (archive.ImportStats, error) {
	rep, err := archive.Import(ctx, s, r, &archive.ImportOptions{Force: force, Timeout: a.timeout})
	for _, refused := range []error{archive.ErrEmpty, archive.ErrNotArchive, archive.ErrDamaged, archive.ErrOutsidePrefix, archive.ErrTooLarge} {
		if errors.Is(err, refused) {
			return rep, withCode(exitUsage, err)
		}
	}
	return rep, deadline(err, a.timeout)
}
