package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

func (a *app) putCmd() *cobra.Command {
	var ifVersion, by string
	var meta []string
	var force bool
	var lf lifetimeFlags
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
"agentmem" (a --meta updated_by=… is kept when --by is not given).

--expires gives the file an expiry: a duration from now (7d, 2w, 12h, 90m), a
date (2026-12-31: the file is kept through that day, UTC), an RFC 3339 time
(2026-12-31T18:00:00Z), or never to remove it. From then on no command, agent
or search sees the file; the store records the expiry as a delete by
agentmem-expiry (agentmem log shows it, agentmem restore brings the file back)
and agentmem prune deletes what has expired. --pin pins the file: it never
expires (--pin removes an expiry it has) and the notebook lists it first;
--unpin unpins it. --pin with --expires is refused, and so is --expires for a
pinned file without --unpin. A replace that names none of them keeps the
file's expiry and pin, as edit does (and migrate copies them); agentmem ls -l
shows them.`,
		Example: `  echo "- likes tea" | agentmem put kamal/main/MEMORY.md
  agentmem put --if-version 3f9a… kamal/main/MEMORY.md < MEMORY.md
  agentmem put --force --meta source=import kamal/main/notes.md < notes.md
  echo "- in Bangkok until Friday" | agentmem put --expires 2026-12-04 kamal/main/trip.md
  agentmem put --force --pin kamal/main/people.md < people.md`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p := argv[0]
			if ifVersion != "" && force {
				return usagef("put: give --if-version or --force, not both")
			}
			if err := lf.check(cmd); err != nil {
				return err
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
				var cur *store.File // the file replaced, whose lifetime the write keeps
				if force || ifVersion != "" {
					f, err := a.readFile(ctx, s, p)
					switch {
					case err == nil:
						if force {
							expected = f.Version
						}
						if f.Version == expected {
							cur = f
						} // else the compare-and-swap fails: nothing is written
					case !errors.Is(err, store.ErrNotFound):
						return err
					}
				}
				l, err := lf.apply(p, lifetimeOf(cur), s.Now())
				if err != nil {
					return err
				}
				if cur != nil && lf.pin && !cur.ExpiresAt.IsZero() {
					fmt.Fprintf(a.stderr, "%s: its expiry (%s) is removed: a pinned file never expires\n", p, lifetimeOf(cur))
				}
				m, err := a.write(ctx, s, l.request(store.WriteRequest{Path: p, Content: string(content), Expected: expected, Metadata: md}))
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
	lf.add(c)
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
with 3. Unchanged text writes nothing and leaves no temporary file. The file's
expiry and pin are kept (agentmem put --expires, --pin changes them). Metadata is
kept, but for who made the change: updated_by becomes --by (default $USER, else
the OS user name, else "agentmem"), client becomes cli, and run_id, tool_call_id and restored_from,
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
				var l lifetime // an edit keeps the file's expiry and pin
				f, err := a.readFile(ctx, s, p)
				switch {
				case err == nil:
					before, version, md, l = f.Content, f.Version, f.Metadata, lifetimeOf(f)
					// An edit of a restored file is no longer that restore,
					// nor the agent's run or tool call that wrote it.
					delete(md, store.RestoredFromKey)
					delete(md, metaRunID)
					delete(md, metaToolCallID)
					delete(md, metaUpdatedBy)
					delete(md, memory.ClientKey) // the client is this CLI now
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
				m, err := a.write(ctx, s, l.request(store.WriteRequest{Path: p, Content: string(after), Expected: version, Metadata: md}))
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
