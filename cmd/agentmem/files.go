package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/memory"
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

func (a *app) putCmd() *cobra.Command {
	var ifVersion, by string
	var meta []string
	var force bool
	c := &cobra.Command{
		Use:   "put PATH",
		Short: "Write stdin to a file: create it, or replace a version you name",
		Long: `put writes stdin (UTF-8 text) to the file at PATH and prints the new version.

Without --if-version it only creates: an existing file is never overwritten and
put fails with exit code 3. --if-version V replaces the file only if its version
is still V (compare-and-swap; see agentmem cat -v). --force replaces whatever
version is there now (still compare-and-swap on the version it reads, so a
write that lands in between is not lost silently: put then fails with 3).

--meta key=value (repeatable) stores metadata with the content; a write
without --meta clears earlier metadata. Every write records who made it, as
metadata updated_by: --by NAME, else $USER, else the OS user name, else
"agentmem" (a --meta updated_by=… is kept when --by is not given).`,
		Example: `  echo "- likes tea" | agentmem put kamal/main/MEMORY.md
  agentmem put --if-version 3f9a… kamal/main/MEMORY.md < MEMORY.md
  agentmem put --force --meta source=import kamal/main/notes.md < notes.md`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p := argv[0]
			if ifVersion != "" && force {
				return usagef("put: give --if-version or --force, not both")
			}
			md, err := parseMeta(meta)
			if err != nil {
				return err
			}
			if md, err = withBy(md, by); err != nil {
				return err
			}
			if err := store.ValidatePath(p); err != nil {
				return fileErr(p, err)
			}
			content, err := io.ReadAll(a.stdin)
			if err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
			return a.withStore(cmd, func(ctx context.Context, s *store.Store) error {
				expected := ifVersion
				if force {
					f, err := a.readFile(ctx, s, p)
					switch {
					case err == nil:
						expected = f.Version
					case !errors.Is(err, store.ErrNotFound):
						return err
					}
				}
				m, err := a.write(ctx, s, store.WriteRequest{Path: p, Content: string(content), Expected: expected, Metadata: md})
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, m.Version)
				return nil
			})
		},
	}
	c.Flags().StringVar(&ifVersion, "if-version", "", "replace the file only if its version is still `V`")
	c.Flags().StringArrayVar(&meta, "meta", nil, "metadata `key=value` to store with the content (repeatable)")
	c.Flags().BoolVar(&force, "force", false, "replace the file whatever its version")
	byFlag(c, &by)
	return c
}

// write writes r, bounded by --timeout, with a message for a conflict.
func (a *app) write(ctx context.Context, s *store.Store, r store.WriteRequest) (store.Mutation, error) {
	wctx, cancel := a.request(ctx)
	defer cancel()
	m, err := s.Write(wctx, r)
	if errors.Is(err, store.ErrConflict) {
		// The store's text ("changed before it could be written") is not
		// repeated: for a create, nothing changed, the file exists.
		if r.Expected == "" {
			return m, quiet(err, "%s exists already; nothing was written: to replace it, pass --if-version with its version (agentmem cat -v %s) or --force", r.Path, r.Path)
		}
		return m, quiet(err, "%s is no longer at version %s (changed or deleted); nothing was written: read it again (agentmem cat -v %s)", r.Path, r.Expected, r.Path)
	}
	if err != nil {
		return m, fileErr(r.Path, deadline(err, a.timeout))
	}
	return m, nil
}

// editorOf returns the editor to run as git does: $VISUAL, else $EDITOR,
// else vi.
func editorOf() string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := os.Getenv(v); e != "" {
			return e
		}
	}
	return "vi"
}

func (a *app) editCmd() *cobra.Command {
	var by string
	c := &cobra.Command{
		Use:   "edit PATH",
		Short: "Edit a file in $VISUAL or $EDITOR, written back with compare-and-swap",
		Long: `edit copies the file at PATH (or nothing, for a new file) to a temporary file,
opens it in $VISUAL, else $EDITOR, else vi (as git does), and writes the result
back only if the file is still at the version it read. If it changed meanwhile,
edit writes nothing, keeps your text in the temporary file, says where, and exits
with 3. Unchanged text writes nothing and leaves no temporary file. Metadata is
kept, but for who made the change: updated_by becomes --by (default $USER, else
the OS user name, else "agentmem"), and run_id, tool_call_id and restored_from,
which describe the earlier change, are dropped.`,
		Example: "  EDITOR=nano agentmem edit kamal/main/MEMORY.md",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p := argv[0]
			if err := store.ValidatePath(p); err != nil {
				return fileErr(p, err)
			}
			editor := editorOf()
			if _, err := withBy(nil, by); err != nil {
				return err
			}
			return a.withStore(cmd, func(ctx context.Context, s *store.Store) error {
				var before, version string
				var md map[string]string
				f, err := a.readFile(ctx, s, p)
				switch {
				case err == nil:
					before, version, md = f.Content, f.Version, f.Metadata
					// An edit of a restored file is no longer that restore,
					// nor the agent's run or tool call that wrote it.
					delete(md, store.RestoredFromKey)
					delete(md, metaRunID)
					delete(md, metaToolCallID)
					delete(md, metaUpdatedBy)
				case !errors.Is(err, store.ErrNotFound):
					return err
				}
				if md, err = withBy(md, by); err != nil {
					return err
				}
				tmp, err := os.CreateTemp("", "agentmem-edit-*-"+path.Base(p))
				if err != nil {
					return err
				}
				name := tmp.Name()
				_, err = tmp.WriteString(before)
				if cerr := tmp.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					os.Remove(name)
					return err
				}
				ed := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "sh", name)
				ed.Stdin, ed.Stdout, ed.Stderr = os.Stdin, a.stdout, a.stderr
				edErr := ed.Run()
				after, err := os.ReadFile(name)
				if err != nil {
					return err
				}
				unchanged := bytes.Equal(after, []byte(before))
				if edErr != nil {
					if unchanged {
						os.Remove(name)
						return fmt.Errorf("editor %q failed, nothing was written (set $VISUAL or $EDITOR to the editor to run): %w", editor, edErr)
					}
					return fmt.Errorf("editor %q failed, nothing was written; your text is in %s: %w", editor, name, edErr)
				}
				if unchanged {
					os.Remove(name)
					fmt.Fprintf(a.stderr, "%s: unchanged, nothing written\n", p)
					return nil
				}
				m, err := a.write(ctx, s, store.WriteRequest{Path: p, Content: string(after), Expected: version, Metadata: md})
				if err != nil {
					if errors.Is(err, store.ErrConflict) {
						return withCode(exitConflict, fmt.Errorf("%s changed while you edited it; nothing was written; your text is in %s (agentmem cat %s shows the new version)", p, name, p))
					}
					return fmt.Errorf("%w (your text is in %s)", err, name)
				}
				os.Remove(name)
				fmt.Fprintln(a.stdout, m.Version)
				return nil
			})
		},
	}
	byFlag(c, &by)
	return c
}

func (a *app) rmCmd() *cobra.Command {
	var ifVersion, by string
	c := &cobra.Command{
		Use:   "rm PATH",
		Short: "Delete a file",
		Long: `rm deletes the file at PATH. With --if-version V it deletes only if the version
is still V; without, it deletes the version it reads (so a write landing in
between fails the delete with 3 rather than vanishing). A missing file is exit 4.
A store that keeps history records who deleted it (--by, default $USER, else the
OS user name, else "agentmem") as metadata updated_by.`,
		Example: "  agentmem rm kamal/main/old.md\n  agentmem rm --if-version 3f9a… kamal/main/old.md",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p := argv[0]
			if err := store.ValidatePath(p); err != nil {
				return fileErr(p, err)
			}
			md, err := withBy(nil, by)
			if err != nil {
				return err
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				expected := ifVersion
				if expected == "" {
					f, err := a.readFile(ctx, s, p)
					if err != nil {
						return err
					}
					expected = f.Version
				}
				dctx, cancel := a.request(ctx)
				defer cancel()
				m, err := s.Delete(dctx, store.DeleteRequest{Path: p, Expected: expected, Metadata: md})
				if errors.Is(err, store.ErrConflict) {
					if _, rerr := a.readFile(ctx, s, p); errors.Is(rerr, store.ErrNotFound) {
						return withCode(exitNotFound, fmt.Errorf("%s: no such file (nothing at version %s)", p, expected))
					}
					return fmt.Errorf("%s is no longer at version %s; nothing was deleted: %w", p, expected, err)
				}
				if err != nil {
					return fileErr(p, deadline(err, a.timeout))
				}
				if !m.Existed {
					return withCode(exitNotFound, fmt.Errorf("%s: no such file", p))
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&ifVersion, "if-version", "", "delete only if the version is still `V`")
	byFlag(c, &by)
	return c
}

func (a *app) searchCmd() *cobra.Command {
	var r store.SearchRequest
	var jsonOut bool
	var mode string
	c := &cobra.Command{
		Use:   "search PREFIX QUERY",
		Short: "Bounded search of every file under PREFIX, by words and meaning",
		Long: `search scores every file whose path starts with PREFIX, in every folder below
it ("kamal/" searches kamal/main/MEMORY.md too, as ls lists it), by QUERY, and
prints "score path" then the snippet, best first: the store's one search, each
folder ranked with its own index and statistics, the matches sharing one
--limit and one --max-chars. Every bound is a flag: --max-files and
--max-file-chars bound what a folder's scan reads (a folder's search index,
once built, covers all of its files). When a bound cut the search short, or
nothing matched, it says on stderr how many files it covered, and why it
scanned files instead of answering from the index, if it did. When nothing
matched, the files closest in meaning (hybrid ranking; no word in common with
QUERY) follow a "no match; close in meaning:" line: worth a look, not an
answer.

The ranking is hybrid (BM25 fused with the embedder's vectors; see agentmem
--help for the embedder) with an embedder, BM25 without; --mode picks one:
literal (the reference notebook's term counts), bm25, or hybrid (which needs
an embedder).

--json prints exactly what the notebook's search_memory tool returns for the
scope PREFIX (NAMESPACE/AGENT/, such as kamal/main/): the same JSON, with its
bounds (10 matches, 4,000 characters, 1,000 files, 65,536 characters per file;
--limit, --max-chars, --max-files and --max-file-chars set them); a query the
tool refuses prints its {"error": …} and exits 2.`,
		Example: `  agentmem search kamal/ "tea hanoi"
  agentmem search --json kamal/main/ "what does she drink"
  agentmem search --mode literal kamal/ tea`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			r.Prefix, r.Query, r.Mode = argv[0], argv[1], store.SearchMode(mode)
			if cmd.Flags().Changed("mode") && (mode == "" || !r.Mode.Valid()) {
				return usagef("search: --mode %q: use literal, bm25 or hybrid", mode)
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				if r.Mode == store.SearchHybrid && s.Embedder() == nil {
					return usagef("search: --mode hybrid needs an embedder, and this store has none (embedder=none or --embedder none)")
				}
				if jsonOut {
					return a.searchJSON(ctx, cmd, s, r)
				}
				return a.search(ctx, s, r)
			})
		},
	}
	c.Flags().IntVar(&r.Limit, "limit", 10, "most matches to print")
	c.Flags().IntVar(&r.MaxFiles, "max-files", 1000, "most files a folder's scan scores (a built index covers all)")
	c.Flags().IntVar(&r.MaxChars, "max-chars", 8000, "most characters of names and snippets, over all matches of all folders")
	c.Flags().IntVar(&r.MaxFileChars, "max-file-chars", 65536, "most characters read of each file")
	c.Flags().BoolVar(&jsonOut, "json", false, "print what the notebook's search_memory returns for the scope PREFIX (NAMESPACE/AGENT/)")
	c.Flags().StringVar(&mode, "mode", "", "ranking: literal, bm25 or hybrid (default hybrid with an embedder, else bm25)")
	return c
}

// search prints the store's search of every folder under r.Prefix: the
// matches, or the files close in meaning when none, then on stderr what
// was left out and why the search scanned, if it did.
func (a *app) search(ctx context.Context, s *store.Store, r store.SearchRequest) error {
	r.Recursive = true
	sctx, cancel := a.request(ctx)
	defer cancel()
	res, err := s.Search(sctx, r)
	if err != nil {
		return fileErr(r.Prefix, deadline(err, a.timeout))
	}
	printMatches(a.stdout, res.Matches)
	if len(res.Matches) == 0 && len(res.Related) > 0 {
		fmt.Fprintln(a.stdout, "no match; close in meaning:")
		printMatches(a.stdout, res.Related)
	}
	switch {
	case res.Truncated:
		fmt.Fprintf(a.stderr, "(truncated: %d files scored under %q; raise --limit, --max-files, --max-chars or --max-file-chars)\n", res.Scanned, r.Prefix)
	case len(res.Matches) == 0:
		fmt.Fprintf(a.stderr, "no match: %d files scored under %q\n", res.Scanned, r.Prefix)
	}
	if res.Fallback != "" {
		fmt.Fprintf(a.stderr, "(%s)\n", res.Fallback)
	}
	return nil
}

// printMatches prints each match as "score path", then its snippet
// indented by a tab.
func printMatches(w io.Writer, ms []store.Match) {
	for _, m := range ms {
		fmt.Fprintf(w, "%g %s\n", m.Score, m.Path)
		fmt.Fprintf(w, "\t%s\n", strings.ReplaceAll(strings.TrimRight(m.Snippet, "\n"), "\n", "\n\t"))
	}
}

// searchJSON prints what the notebook's search_memory returns for the
// scope r.Prefix, NAMESPACE/AGENT/: the tool itself answers, with the
// notebook's default bounds unless a bound flag was given.
func (a *app) searchJSON(ctx context.Context, cmd *cobra.Command, s *store.Store, r store.SearchRequest) error {
	scope := strings.TrimSuffix(r.Prefix, "/")
	if scope == "" || strings.HasSuffix(scope, "/") {
		return usagef("search --json: PREFIX must name a notebook's scope, NAMESPACE/AGENT/ (such as kamal/main/), got %q", r.Prefix)
	}
	ns, agent := "", scope
	if i := strings.LastIndex(scope, "/"); i >= 0 {
		ns, agent = scope[:i], scope[i+1:]
	}
	var l memory.Limits
	for _, b := range []struct {
		flag string
		v    int
		to   *int
	}{
		{"limit", r.Limit, &l.MaxSearchResults},
		{"max-chars", r.MaxChars, &l.MaxSearchResultChars},
		{"max-files", r.MaxFiles, &l.MaxSearchFiles},
		{"max-file-chars", r.MaxFileChars, &l.MaxMemorySize},
	} {
		if cmd.Flags().Changed(b.flag) {
			if b.v <= 0 {
				return usagef("search: --%s must be positive, got %d", b.flag, b.v)
			}
			*b.to = b.v
		}
	}
	m, err := memory.New(s, &memory.Options{AgentName: agent, SearchMode: r.Mode, Limits: l})
	if err != nil {
		return fileErr(r.Prefix, err)
	}
	tool := memory.SearchTool
	args, err := json.Marshal(map[string]string{"query": r.Query})
	if err != nil {
		return err
	}
	sctx, cancel := a.request(ctx)
	defer cancel()
	res, err := m.Call(sctx, memory.Invocation{Namespace: ns}, tool, args)
	if err != nil {
		return fileErr(r.Prefix, deadline(err, a.timeout))
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, string(out))
	if te, ok := res.(*memory.ToolError); ok {
		return withCode(exitUsage, fmt.Errorf("agentmem: search: %s", te.Message))
	}
	return nil
}

func (a *app) appendCmd() *cobra.Command {
	var opID, by string
	var meta []string
	var rotate bool
	var maxSize, maxFiles int
	var maxAge ageValue
	c := &cobra.Command{
		Use:   "append PATH TEXT --operation-id ID",
		Short: "Append TEXT to a file, exactly once per operation id",
		Long: `append adds TEXT to the file at PATH as the notebook's write_memory does (one
newline between entries), with compare-and-swap retries, and prints the version.

--operation-id is required: an error (a timeout, a lost reply) does not prove that
nothing was written, so a retried append without one could add TEXT twice. With
the same id, a rerun writes nothing and prints the original version; the same id
with another PATH or TEXT fails with 3. Use an id stable across retries, such as
"import/2025-06-01/line-42".

A file holds at most --max-size characters (default ` + strconv.Itoa(memory.DefaultMaxMemorySize) + `, the notebook's
bound): an append that would pass it fails (exit 2) and writes nothing. With
--rotate it never fails for size (only a TEXT longer than --max-size on its own
does): PATH is the first file of a series, PATH_0002, PATH_0003, … before the
extension (pruned.md, pruned_0002.md), and an append that would overfill the
newest file starts the next one. Each rotating append records ` + memory.AppendedAtKey + ` (its time,
RFC 3339) on the file it writes, and the operation id holds across the whole
series: a rerun is answered wherever the first run landed. Retention, applied
each time the series moves to a new file: --max-files N keeps the newest N
files (the current one included), --max-age AGE (720h, 30d) deletes each older
file whose last append is older than AGE; a file without ` + memory.AppendedAtKey + ` is kept
until --max-files removes it. Each delete is recorded with updated_by
` + memory.RetentionUpdatedBy + ` and ` + memory.RetentionReasonKey + `=why (a store with history can restore it). When
the append landed but a delete failed, append prints the version, says so on
stderr and exits 0: the next rotation tries again.

The write records who made it as metadata updated_by: --by, else $USER, else the
OS user name, else "agentmem".`,
		Example: `  agentmem append --operation-id crm-sync/42 kamal/main/MEMORY.md -- "- moved to Hanoi"
  agentmem append --rotate --max-files 10 --operation-id prune/$RUN kamal/main/pruned.md -- "$TEXT"`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if opID == "" {
				return usagef("append needs --operation-id ID: without one, a retried append can add the text twice (an error does not prove nothing was written); use an id stable across retries, such as job/run-42/step-1")
			}
			if maxSize <= 0 {
				return usagef("append: --max-size must be a positive number of characters, got %d", maxSize)
			}
			if maxFiles < 0 {
				return usagef("append: --max-files must not be negative, got %d (0 keeps every file)", maxFiles)
			}
			if !rotate && (maxFiles > 0 || maxAge > 0) {
				return usagef("append: --max-files and --max-age are the retention of a rotating series: add --rotate")
			}
			md, err := parseMeta(meta)
			if err != nil {
				return err
			}
			if md, err = withBy(md, by); err != nil {
				return err
			}
			p := argv[0]
			opts := &memory.AppendOptions{OperationID: opID, Metadata: md, MaxMemorySize: maxSize}
			if rotate {
				opts.Rotate = &memory.RotateOptions{MaxFiles: maxFiles, MaxAge: time.Duration(maxAge)}
			}
			return a.withStore(cmd, func(ctx context.Context, s *store.Store) error {
				actx, cancel := a.request(ctx)
				defer cancel()
				m, err := memory.Append(actx, s, p, argv[1], opts)
				retention := errors.Is(err, memory.ErrRetention) // landed; a delete failed
				switch {
				case retention:
				case errors.Is(err, store.ErrOperationConflict):
					return fmt.Errorf("operation id %q was used before with another path or text; nothing was written: pick a new id: %w", opID, err)
				case errors.Is(err, store.ErrTooLarge) && !rotate:
					return fileErr(p, fmt.Errorf("%w (nothing was appended: --rotate starts the next file of a series instead, or raise --max-size)", err))
				case errors.Is(err, store.ErrTooLarge) && entryChars(argv[1]) > maxSize:
					return usagef("append: TEXT alone is %d characters with its newline, over --max-size %d, so no file of the series can hold it; nothing was appended: split it or raise --max-size", entryChars(argv[1]), maxSize)
				case err != nil:
					return fileErr(p, deadline(err, a.timeout))
				}
				if m.Version == "" { // blank TEXT: the notebook appends nothing
					return usagef("append: TEXT is blank, so nothing was appended: give the line to add")
				}
				if m.Replayed {
					fmt.Fprintf(a.stderr, "%s: operation %s was applied before; nothing written again\n", p, opID)
				}
				fmt.Fprintln(a.stdout, m.Version)
				if retention {
					fmt.Fprintf(a.stderr, "agentmem: %s: %v (the next rotation tries again)\n", p, strings.TrimPrefix(err.Error(), "memory: "))
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&opID, "operation-id", "", "operation `ID` that makes the append exactly-once (required)")
	c.Flags().StringArrayVar(&meta, "meta", nil, "metadata `key=value` to store with the content (repeatable)")
	c.Flags().IntVar(&maxSize, "max-size", memory.DefaultMaxMemorySize, "the most `characters` a file holds")
	c.Flags().BoolVar(&rotate, "rotate", false, "when the file is full, go on in the next file of its series (PATH_0002…) instead of failing")
	c.Flags().IntVar(&maxFiles, "max-files", 0, "with --rotate: keep the newest `N` files of the series (0: all)")
	c.Flags().Var(&maxAge, "max-age", "with --rotate: delete older files whose last append is older than `AGE` (720h, 30d; default: never)")
	byFlag(c, &by)
	return c
}

// entryChars is the size an append of text adds to a file, as the
// notebook counts it: text without trailing space, and a newline.
func entryChars(text string) int {
	return utf8.RuneCountInString(strings.TrimRightFunc(text, unicode.IsSpace)) + 1
}

// ageValue is a flag's age: a Go duration (720h) or whole days (30d);
// zero when unset.
type ageValue time.Duration

func (v *ageValue) String() string {
	if *v == 0 {
		return ""
	}
	return time.Duration(*v).String()
}

func (v *ageValue) Type() string { return "AGE" }

func (v *ageValue) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return fmt.Errorf("%q: write whole days such as 30d, or a duration such as 720h", s)
		}
		*v = ageValue(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: write a positive duration such as 720h, or whole days such as 30d", s)
	}
	*v = ageValue(d)
	return nil
}

func (a *app) snapshotCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot USER",
		Short: "Print the memory block a model request carries for USER",
		Long: `snapshot prints exactly the <memory> block that the notebook injects beside
the latest prompt of USER (a user id, escaped to a namespace as the ADK adapter
does: "kamal@example.com" reads namespace kamal_40example.com), with the default
notebook options (agent "main"). It prints nothing for an empty notebook.`,
		Example: "  agentmem snapshot kamal@example.com",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns := memory.EscapeNamespace(argv[0])
			if ns == "" {
				return usagef("snapshot: USER must not be empty")
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				// Default options, except that a store failure is reported
				// rather than injected as an empty block.
				m, err := memory.New(s, &memory.Options{InjectionErrors: memory.RaiseErrors})
				if err != nil {
					return err
				}
				sctx, cancel := a.request(ctx)
				defer cancel()
				block, err := m.Snapshot(sctx, ns)
				if err != nil {
					return deadline(err, a.timeout)
				}
				if block != "" {
					fmt.Fprintln(a.stdout, strings.TrimSuffix(block, "\n"))
				}
				return nil
			})
		},
	}
}

func (a *app) pruneCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Remove expired operation receipts and tombstones",
		Long: `prune removes the expired receipts and delete tombstones on backends without a
native TTL (files, SQLite, PostgreSQL) and prints how many rows it removed;
backends with a TTL (DynamoDB, Firestore, Cosmos DB) expire them themselves (0).
It never touches a memory file.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				n, err := s.PruneExpired(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "pruned %d expired receipts and tombstones\n", n)
				return nil
			})
		},
	}
}

func (a *app) statsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stats [PREFIX]",
		Short: "Count files, bytes and namespaces",
		Long: `stats walks every file that starts with PREFIX (default: the whole store) and
prints the number of files, the bytes of their content and the number of
namespaces (distinct first path segments).`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			prefix := ""
			if len(argv) == 1 {
				prefix = argv[0]
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				var files, size int
				ns := map[string]bool{}
				for p, err := range s.Walk(ctx, prefix, 0) {
					if err != nil {
						return fileErr(prefix, err)
					}
					f, err := a.readFile(ctx, s, p)
					if errors.Is(err, store.ErrNotFound) {
						continue // deleted since listed
					}
					if err != nil {
						return err
					}
					files++
					size += len(f.Content)
					first, _, _ := strings.Cut(p, "/")
					ns[first] = true
				}
				fmt.Fprintf(a.stdout, "files: %d\nbytes: %d\nnamespaces: %d\n", files, size, len(ns))
				a.warnUnaddressable(prefix)
				return nil
			})
		},
	}
}

// fileStoreTmpPrefix starts the names of the file store's temporary files
// (core/filestore keeps it unexported), which are not memory files.
const fileStoreTmpPrefix = ".agentmem-tmp-"

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
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), fileStoreTmpPrefix) || !strings.HasPrefix(rel, prefix) {
			return nil
		}
		if store.ValidatePath(rel) != nil && !store.IsIndexPath(rel) { // the search index's rows are the store's
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
