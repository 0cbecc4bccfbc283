package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
	var long, asJSON bool
	c := &cobra.Command{
		Use:   "ls [PREFIX]",
		Short: "List every path that starts with PREFIX",
		Long: `ls prints every path that starts with PREFIX (a plain string prefix: "kamal"
also lists "kamal-b/x.md"), one per line, in code-point order, walking the store
page by page however many files there are. A file that has expired is not
listed, whether or not the store has deleted it yet.

-l adds each file's lifetime in a LIFETIME column: pinned, expires and its
expiry (RFC 3339, UTC), or - (agentmem put --expires and --pin set them).
--json prints one JSON object a line instead: path, and expires_at and pinned
when set. The plain output stays the paths alone, for scripts.`,
		Example: "  agentmem ls\n  agentmem ls kamal/main/\n  agentmem ls -l kamal/main/",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			prefix := ""
			if len(argv) == 1 {
				prefix = argv[0]
			}
			if long && asJSON {
				return usagef("ls: give -l or --json, not both")
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				var err error
				if long || asJSON {
					err = a.listLong(ctx, s, prefix, asJSON)
				} else {
					for p, werr := range s.Walk(ctx, prefix, 0) {
						if werr != nil {
							err = werr
							break
						}
						fmt.Fprintln(a.stdout, p)
					}
				}
				if err != nil {
					return fileErr(prefix, err)
				}
				a.warnUnaddressable(prefix)
				return nil
			})
		},
	}
	c.Flags().BoolVarP(&long, "long", "l", false, "also print each file's lifetime (pinned, or its expiry)")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line: path, expires_at, pinned")
	return c
}

// lsLine is one file as ls --json prints it (one JSON object a line).
type lsLine struct {
	Path      string `json:"path"`
	ExpiresAt string `json:"expires_at,omitempty"`
	Pinned    bool   `json:"pinned,omitempty"`
}

// lsPageSize is the page of each ListEntries request of ls -l and --json.
const lsPageSize = 1000

// listLong prints every file under prefix with its lifetime: a table
// (ls -l) or JSON lines (ls --json), page by page.
func (a *app) listLong(ctx context.Context, s *store.Store, prefix string, asJSON bool) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	enc := json.NewEncoder(a.stdout)
	if !asJSON {
		fmt.Fprintln(tw, "PATH\tLIFETIME")
	}
	after := ""
	for {
		var opts []store.ListOptions
		if after != "" {
			opts = append(opts, store.ListOptions{After: after})
		}
		lctx, cancel := a.request(ctx)
		entries, err := s.ListEntries(lctx, prefix, lsPageSize, opts...)
		cancel()
		if err != nil {
			return deadline(err, a.timeout)
		}
		for _, e := range entries {
			if asJSON {
				if err := enc.Encode(lsLine{Path: e.Path, ExpiresAt: jsonExpiry(e.ExpiresAt()), Pinned: e.Pinned}); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\n", e.Path, lifetime{expires: e.ExpiresAt(), pinned: e.Pinned})
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(entries) < lsPageSize {
			return nil
		}
		after = entries[len(entries)-1].Path
	}
}

func (a *app) catCmd() *cobra.Command {
	var verbose bool
	c := &cobra.Command{
		Use:   "cat PATH",
		Short: "Print a file's content",
		Long: `cat prints the content of the file at PATH on stdout, byte for byte.
With -v it first prints its version, its lifetime (pinned: true, or expires: and
its expiry, when it has one) and metadata on stderr, so that stdout stays the
content alone. A file that has expired is not found (exit 4).`,
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
					if f.Pinned {
						fmt.Fprintln(a.stderr, "pinned: true")
					}
					if !f.ExpiresAt.IsZero() {
						fmt.Fprintf(a.stderr, "expires: %s\n", f.ExpiresAt.UTC().Format(time.RFC3339))
					}
					for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
						fmt.Fprintf(a.stderr, "meta: %s=%s\n", k, f.Metadata[k])
					}
				}
				_, err = io.WriteString(a.stdout, f.Content)
				return err
			})
		},
	}
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print the version, lifetime and metadata (on stderr)")
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
