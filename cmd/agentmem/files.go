package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

// withStore runs f on the --store store and closes it afterwards.
func (a *app) withStore(cmd *cobra.Command, f func(ctx context.Context, s *store.Store) error) error {
	ctx := cmd.Context()
	s, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(ctx, s)
}

// withExisting runs f on the --store store, as withStore does, but never
// creates the store: for the commands that only read or delete.
func (a *app) withExisting(cmd *cobra.Command, f func(ctx context.Context, s *store.Store) error) error {
	ctx := cmd.Context()
	s, err := a.openExisting(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(ctx, s)
}

// readFile reads the whole file at p, bounded by --timeout.
func (a *app) readFile(ctx context.Context, s *store.Store, p string) (*store.File, error) {
	rctx, cancel := a.request(ctx)
	defer cancel()
	f, err := s.Read(rctx, p, wholeFile)
	if err != nil {
		return nil, fileErr(p, deadline(err, a.timeout))
	}
	return f, nil
}

// quietError is an error whose message is its own, without that of the
// error it wraps (still found by errors.Is).
type quietError struct {
	msg string
	err error
}

func (e *quietError) Error() string { return e.msg }
func (e *quietError) Unwrap() error { return e.err }

// quiet returns an error saying format, wrapping err without repeating
// its message.
func quiet(err error, format string, args ...any) error {
	return &quietError{fmt.Sprintf(format, args...), err}
}

// fileErr names p in err, with what to do for the usual sentinels.
func fileErr(p string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s: no such file (agentmem ls lists the paths): %w", p, err)
	case errors.Is(err, store.ErrInvalidPath):
		return fmt.Errorf("%s: invalid path: use /-separated segments of letters, digits, '_', '.' and '-': %w", p, err)
	}
	return fmt.Errorf("%s: %w", p, err)
}

func (a *app) lsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls [PREFIX]",
		Short: "List every path that starts with PREFIX",
		Long: `ls prints every path that starts with PREFIX (a plain string prefix: "kamal"
also lists "kamal-b/x.md"), one per line, in code-point order, walking the store
page by page however many files there are.`,
		Example: "  agentmem ls\n  agentmem ls kamal/main/",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			prefix := ""
			if len(argv) == 1 {
				prefix = argv[0]
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				for p, err := range s.Walk(ctx, prefix, 0) {
					if err != nil {
						return fileErr(prefix, err)
					}
					fmt.Fprintln(a.stdout, p)
				}
				a.warnUnaddressable(prefix)
				return nil
			})
		},
	}
}

func (a *app) catCmd() *cobra.Command {
	var verbose bool
	c := &cobra.Command{
		Use:   "cat PATH",
		Short: "Print a file's content",
		Long: `cat prints the content of the file at PATH on stdout, byte for byte.
With -v it first prints its version and metadata on stderr, so that stdout stays
the content alone.`,
		Example: "  agentmem cat kamal/main/MEMORY.md\n  agentmem cat -v kamal/main/MEMORY.md",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				f, err := a.readFile(ctx, s, argv[0])
				if err != nil {
					return err
				}
				if verbose {
					fmt.Fprintf(a.stderr, "version: %s\n", f.Version)
					for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
						fmt.Fprintf(a.stderr, "meta: %s=%s\n", k, f.Metadata[k])
					}
				}
				_, err = io.WriteString(a.stdout, f.Content)
				return err
			})
		},
	}
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print the version and metadata (on stderr)")
	return c
}

// warnUnaddressable says on stderr how many files under prefix, in a file
// store, have names that the path rules refuse (spaces, non-ASCII letters:
// "café.md"), so that ls and stats do not skip them without a word; it
// names the first few. Other stores cannot hold such names.
func (a *app) warnUnaddressable(prefix string) {
	u, err := store.ParseURL(a.storeURLOf())
	if err != nil || u.Scheme != "file" {
		return
	}
	root, err := driver.URLFilePath(u)
	if err != nil {
		return
	}
	var bad []string
	_ = filepath.WalkDir(root, func(name string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, rerr := filepath.Rel(root, name)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == filestore.SidecarDir || (rel != "." && !strings.HasPrefix(rel+"/", prefix) && !strings.HasPrefix(prefix, rel+"/")) {
				return fs.SkipDir
			}
			return nil
		}
		if e.Type().IsRegular() && strings.HasPrefix(rel, prefix) && !filestore.IsTemporaryName(e.Name()) && !filestore.Listed(rel) {
			bad = append(bad, strconv.Quote(rel))
		}
		return nil
	})
	if len(bad) == 0 {
		return
	}
	shown := strings.Join(bad[:min(len(bad), 3)], ", ")
	if len(bad) > 3 {
		shown += ", …"
	}
	fmt.Fprintf(a.stderr, "agentmem: warning: %d files in %s are not valid memory paths, so no command sees them: %s (rename them to /-separated segments of ASCII letters, digits, '_', '.' and '-')\n", len(bad), root, shown)
}
