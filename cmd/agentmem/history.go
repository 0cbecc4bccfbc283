package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// Metadata keys that log shows as who made a change.
const (
	metaUpdatedBy  = "updated_by"
	metaRunID      = "run_id"
	metaToolCallID = "tool_call_id"
)

// historyPageSize bounds each History request of log; tests lower it to
// exercise the paging.
var historyPageSize = 100

// historyErr explains the history errors a command can meet.
func historyErr(what string, err error) error {
	if errors.Is(err, store.ErrHistoryUnsupported) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return err
}

// kindOf names the change e made: write, delete, expire (the delete the
// store recorded when the file's expiry passed: updated_by
// store.ExpiryUpdatedBy), or restore (a write that restored a past
// version).
func kindOf(e *store.HistoryEntry) string {
	switch {
	case e.Deleted && e.Metadata[metaUpdatedBy] == store.ExpiryUpdatedBy:
		return "expire"
	case e.Deleted:
		return "delete"
	case e.Metadata[store.RestoredFromKey] != "":
		return "restore"
	}
	return "write"
}

// logLine is one entry as log --json prints it (one JSON object a line).
type logLine struct {
	Path        string            `json:"path"`
	Version     string            `json:"version"`
	Previous    string            `json:"previous,omitempty"`
	Kind        string            `json:"kind"`
	Time        string            `json:"time,omitempty"`
	OperationID string            `json:"operation_id,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Chars       int               `json:"chars"`
	ExpiresAt   string            `json:"expires_at,omitempty"`
	Pinned      bool              `json:"pinned,omitempty"`
}

// who is the "who" column of log: updated_by, run and tool call, or "-".
func who(md map[string]string) string {
	var parts []string
	if v := md[metaUpdatedBy]; v != "" {
		parts = append(parts, v)
	}
	if v := md[metaRunID]; v != "" {
		parts = append(parts, "run="+v)
	}
	if v := md[metaToolCallID]; v != "" {
		parts = append(parts, "call="+v)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// logTime formats a change's time, "" when unknown.
func logTime(t time.Time, layout string) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(layout)
}

func (a *app) logCmd() *cobra.Command {
	var prefix, user string
	var limit int
	var asJSON bool
	c := &cobra.Command{
		Use:   "log [PATH]",
		Short: "Show the recorded changes of a file, or of every file under a prefix",
		Long: `log prints the history of the file at PATH, newest first: one line per change
with its version, time (RFC 3339, UTC), kind (write, delete, restore: a write
that restored a past version, or expire: the delete the store recorded, as
updated_by agentmem-expiry, when the file's expiry passed), size in characters,
who made it (the metadata updated_by, run_id and tool_call_id), its operation id
and the lifetime the write gave the file (pinned, expires and the expiry in RFC
3339, or -). A file that has expired is recorded as expired before log reads
the history, so its expire line shows at once; agentmem restore PATH VERSION
brings back the version it deleted.

--prefix PREFIX prints the history of every file whose path starts with PREFIX
(an audit: "kamal/" is everything written about one user), ordered by path and
then newest first; --user ID does the same for a user id's namespace, escaped as
the ADK adapter does. --json prints one JSON object a line instead, with the
whole metadata, the previous version, and expires_at and pinned when set.

History is kept only by a store opened with history on (the store URL parameter
?history=on, ?history=720h or ?history=30d: the retention, default 30 days), for
the changes made since. It shows at most --limit changes (0: all), and says on
stderr when there are more.`,
		Example: `  agentmem --store 'sqlite:memory.db?history=30d' log kamal/main/MEMORY.md
  agentmem log --prefix kamal/ --limit 0
  agentmem log --user kamal@example.com --json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			req := store.HistoryRequest{Prefix: prefix}
			set := 0
			if len(argv) == 1 {
				req.Path = argv[0]
				set++
			}
			if cmd.Flags().Changed("prefix") {
				set++
			}
			if user != "" {
				ns := memory.EscapeNamespace(user)
				req.Prefix = ns + "/"
				set++
			}
			if set != 1 {
				return usagef("log: give one of PATH, --prefix PREFIX or --user ID (see agentmem log --help)")
			}
			if limit < 0 {
				return usagef("log: --limit must be 0 (all) or more, got %d", limit)
			}
			if req.Path != "" {
				if err := store.ValidatePath(req.Path); err != nil {
					return fileErr(req.Path, err)
				}
			}
			// Opened as restore opens it, so that the expiry History
			// records (a delete by agentmem-expiry) is in the history even
			// when the URL does not turn it on.
			ctx := cmd.Context()
			s, err := a.openRecording(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			return a.printLog(ctx, s, req, limit, asJSON)
		},
	}
	c.Flags().StringVar(&prefix, "prefix", "", "the history of every file whose path starts with `PREFIX`")
	c.Flags().StringVar(&user, "user", "", "the history of the namespace of user `ID` (escaped as the ADK adapter does)")
	c.Flags().IntVarP(&limit, "limit", "n", 20, "most changes to print (0: all)")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line")
	return c
}

// printLog prints up to limit (0: all) entries of the history r selects,
// paging through the store's pages.
func (a *app) printLog(ctx context.Context, s *store.Store, r store.HistoryRequest, limit int, asJSON bool) error {
	what := r.Path
	if what == "" {
		what = r.Prefix
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	enc := json.NewEncoder(a.stdout)
	header := false
	n := 0
	for limit == 0 || n < limit {
		r.Limit = historyPageSize
		if limit > 0 {
			r.Limit = min(r.Limit, limit-n)
		}
		hctx, cancel := a.request(ctx)
		page, err := s.History(hctx, r)
		cancel()
		if err != nil {
			return fileErr(what, historyErr("log", deadline(err, a.timeout)))
		}
		for i := range page.Entries {
			e := &page.Entries[i]
			chars := utf8.RuneCountInString(e.Content)
			if asJSON {
				if err := enc.Encode(logLine{Path: e.Path, Version: e.Version, Previous: e.Previous, Kind: kindOf(e),
					Time: logTime(e.Time, time.RFC3339Nano), OperationID: e.OperationID, Metadata: e.Metadata, Chars: chars,
					ExpiresAt: jsonExpiry(e.ExpiresAt), Pinned: e.Pinned}); err != nil {
					return err
				}
				continue
			}
			if !header {
				if r.Path == "" {
					fmt.Fprint(tw, "PATH\t")
				}
				fmt.Fprintln(tw, "VERSION\tTIME\tKIND\tCHARS\tWHO\tOPERATION\tLIFETIME")
				header = true
			}
			if r.Path == "" {
				fmt.Fprintf(tw, "%s\t", e.Path)
			}
			size := fmt.Sprint(chars)
			if e.Deleted {
				size = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Version, orDash(logTime(e.Time, time.RFC3339)), kindOf(e), size, who(e.Metadata), orDash(e.OperationID),
				lifetime{expires: e.ExpiresAt, pinned: e.Pinned})
		}
		n += len(page.Entries)
		if err := tw.Flush(); err != nil {
			return err
		}
		r.After = page.Next
		if page.Next == "" {
			break
		}
	}
	if limit > 0 && n == limit && r.After != "" {
		// Say so only when a change is left.
		r.Limit = 1
		hctx, cancel := a.request(ctx)
		page, err := s.History(hctx, r)
		cancel()
		if err != nil {
			return fileErr(what, historyErr("log", deadline(err, a.timeout)))
		}
		if len(page.Entries) > 0 {
			noun := "changes"
			if n == 1 {
				noun = "change"
			}
			fmt.Fprintf(a.stderr, "(%d %s shown; more are recorded: raise --limit, or --limit 0 for all)\n", n, noun)
		}
	}
	if n == 0 {
		if r.Path != "" {
			// A file that exists has nothing recorded, as a prefix can:
			// exit 0 with a note; only a path with no file and no history
			// is not found.
			switch _, err := a.readFile(ctx, s, r.Path); {
			case err == nil:
				fmt.Fprintf(a.stderr, "%s: no recorded change (none since history was turned on with ?history=on in the store URL, or expired, or forgotten)\n", r.Path)
				return nil
			case !errors.Is(err, store.ErrNotFound):
				return err
			}
			return withCode(exitNotFound, fmt.Errorf("%s: no such file and no recorded change (none since history was turned on with ?history=on in the store URL, or expired, or forgotten): %w", r.Path, store.ErrNotFound))
		}
		fmt.Fprintf(a.stderr, "no recorded change under %q\n", r.Prefix)
	}
	return nil
}

// side is one side of a diff: a label and the content.
type side struct{ label, content string }

// absent is the side of a file that does not exist.
var absent = side{label: "/dev/null"}

// versionSide reads the side of path at version.
func (a *app) versionSide(ctx context.Context, s *store.Store, path, version, prefix string) (side, error) {
	rctx, cancel := a.request(ctx)
	defer cancel()
	e, err := s.ReadVersion(rctx, path, version)
	if errors.Is(err, store.ErrNotFound) {
		return side{}, fmt.Errorf("%s: no version %s (agentmem log %s lists them; it may have expired): %w", path, version, path, err)
	}
	if err != nil {
		return side{}, fileErr(path, historyErr("diff", deadline(err, a.timeout)))
	}
	if e.Deleted {
		return absent, nil
	}
	return side{label: prefix + path + "@" + version, content: e.Content}, nil
}

// exitStatus ends a command with its code and no message: diff's 1 for
// "the versions differ".
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func (a *app) diffCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "diff PATH [V1] [V2]",
		Short: "Show the changes between two versions of a file, as a unified diff",
		Long: `diff prints the unified diff (diff -u: "--- a/PATH@V1", "+++ b/PATH@V2", hunks with
3 lines of context) from version V1 to version V2 of the file at PATH. V2 defaults
to the current file, and V1 to the version that the newest recorded change
replaced, so "agentmem diff PATH" shows the last change. A side that does not
exist (before the file was created, after a delete) is /dev/null. agentmem log
PATH lists the versions.

Exit status as diff(1): 0 when the versions are equal (nothing printed), 1 when
they differ. Failures keep agentmem's codes: 2 usage, 4 a version not found (never
recorded, expired or forgotten), and 1 for a store error — with a message on
stderr and nothing on stdout, which tells it from a difference.`,
		Example: `  agentmem diff kamal/main/MEMORY.md
  agentmem diff kamal/main/MEMORY.md 01JZ8Q4N6B3S9V0T2W5X7Y1C4D
  agentmem diff kamal/main/MEMORY.md 01JZ8Q4N6B3S9V0T2W5X7Y1C4D 01JZ8R0D2Q7A1B5C9E3F6G8H0J`,
		Args: args(cobra.RangeArgs(1, 3)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p := argv[0]
			if err := store.ValidatePath(p); err != nil {
				return fileErr(p, err)
			}
			for _, v := range argv[1:] {
				if err := checkVersion("diff", p, v); err != nil {
					return err
				}
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				var from, to side
				var err error
				switch {
				case len(argv) == 3:
					to, err = a.versionSide(ctx, s, p, argv[2], "b/")
				default:
					to, err = a.currentSide(ctx, s, p)
				}
				if err != nil {
					return err
				}
				switch {
				case len(argv) >= 2:
					from, err = a.versionSide(ctx, s, p, argv[1], "a/")
				default:
					from, err = a.lastReplaced(ctx, s, p)
				}
				if err != nil {
					return err
				}
				differ, err := writeUnified(a.stdout, from.label, to.label, from.content, to.content)
				if err != nil {
					return err
				}
				if differ {
					return exitStatus(exitError)
				}
				return nil
			})
		},
	}
}

// currentSide reads the current file at p, absent when there is none.
func (a *app) currentSide(ctx context.Context, s *store.Store, p string) (side, error) {
	f, err := a.readFile(ctx, s, p)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return absent, nil
	case err != nil:
		return side{}, err
	}
	return side{label: "b/" + p + "@" + f.Version, content: f.Content}, nil
}

// lastReplaced reads the version that the newest recorded change of p
// replaced.
func (a *app) lastReplaced(ctx context.Context, s *store.Store, p string) (side, error) {
	hctx, cancel := a.request(ctx)
	page, err := s.History(hctx, store.HistoryRequest{Path: p, Limit: 1})
	cancel()
	if err != nil {
		return side{}, fileErr(p, historyErr("diff", deadline(err, a.timeout)))
	}
	if len(page.Entries) == 0 {
		return side{}, withCode(exitNotFound, fmt.Errorf("%s: no recorded change to show (none since history was turned on with ?history=on in the store URL, or expired, or forgotten): %w", p, store.ErrNotFound))
	}
	prev := page.Entries[0].Previous
	if prev == "" {
		return absent, nil // the change created the file
	}
	return a.versionSide(ctx, s, p, prev, "a/")
}

// versionStem is the length of the part every store version starts with:
// 26 characters of Crockford base32 (a ULID: its time, then random bits),
// followed by nothing, or by "~" or "+" and what the store adds.
const versionStem = 26

// crockford is the alphabet of a version's stem.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// checkVersion refuses, as a usage error (exit 2), a VERSION argument of
// cmd that no store makes: empty, or not starting with 26 characters of
// Crockford base32. Whether a well-formed one exists is the store's
// answer (exit 4 when not).
func checkVersion(cmd, p, v string) error {
	if v == "" {
		return usagef("%s: VERSION must not be empty (agentmem log %s lists them)", cmd, p)
	}
	ok := len(v) >= versionStem && (len(v) == versionStem || v[versionStem] == '~' || v[versionStem] == '+')
	for i := 0; ok && i < versionStem; i++ {
		ok = strings.IndexByte(crockford, v[i]) >= 0
	}
	if !ok {
		return usagef("%s: %q is not a version: a version is 26 characters of base32 (digits and capitals but I, L, O, U), such as 01JZ8Q4N6B3S9V0T2W5X7Y1C4D; agentmem log %s lists them", cmd, v, p)
	}
	return nil
}

// restoreOperation returns the operation of a restore of path to version:
// the id given, else one derived from path, version and the version the
// restore replaces, so that the same command run again over the same file
// is the same operation. The fingerprint covers path and version only, so
// that a rerun after the restore landed (when the file's version changed)
// still matches the receipt.
func restoreOperation(id, path, version, current string) store.Operation {
	digest := func(parts ...string) string {
		h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
		return hex.EncodeToString(h[:16])
	}
	if id == "" {
		id = "agentmem-restore:" + digest(path, version, current)
	}
	return store.Operation{ID: id, Fingerprint: "restore:" + digest(path, version)}
}

func (a *app) restoreCmd() *cobra.Command {
	var opID, by string
	var meta []string
	c := &cobra.Command{
		Use:   "restore PATH VERSION",
		Short: "Write a past version of a file back, exactly once",
		Long: `restore writes the content of VERSION of the file at PATH (agentmem log PATH
lists them) back as a new version, and prints it. It reads the file first and
writes with compare-and-swap on the version it read, so a change made meanwhile
is never overwritten: restore then writes nothing and exits with 3 (run it
again). A deleted file is restored too, and so is one that has expired (restore
the version its expire line in agentmem log replaced): the restored file keeps
the version's pin but not its expiry, which would hide it again (agentmem put
--expires gives it a new one).

The write is recorded in the history like any other (with the default retention
of 30 days when the store URL does not set ?history=), as kind restore, with the
metadata restored_from=VERSION and updated_by=--by (default $USER, else the OS
user name, else "agentmem") plus any
--meta, so a restore can itself be undone.

It is exactly-once: --operation-id names the operation (the same id with another
PATH or VERSION fails with 3); without one, the id is derived from PATH, VERSION
and the version it replaces, and a file whose current content is already that
restore of VERSION is left alone. Either way, running the same command again
after a lost reply or a timeout writes nothing twice and prints the version.`,
		Example: `  agentmem restore kamal/main/MEMORY.md 01JZ8Q4N6B3S9V0T2W5X7Y1C4D
  agentmem restore --by oncall --operation-id incident-42/kamal kamal/main/MEMORY.md 01JZ8Q4N6B3S9V0T2W5X7Y1C4D`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p, version := argv[0], argv[1]
			if err := store.ValidatePath(p); err != nil {
				return fileErr(p, err)
			}
			if err := checkVersion("restore", p, version); err != nil {
				return err
			}
			md, err := parseMeta(meta)
			if err != nil {
				return err
			}
			if md, err = withBy(md, by); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := a.openRecording(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			return a.restore(ctx, s, p, version, opID, md)
		},
	}
	c.Flags().StringVar(&opID, "operation-id", "", "operation `ID` that makes the restore exactly-once (default: derived from PATH, VERSION and the version replaced)")
	byFlag(c, &by)
	c.Flags().StringArrayVar(&meta, "meta", nil, "more metadata `key=value` to store with the restored content (repeatable)")
	return c
}

// restore restores version of p over the version it reads now.
func (a *app) restore(ctx context.Context, s *store.Store, p, version, opID string, md map[string]string) error {
	var current *store.File
	f, err := a.readFile(ctx, s, p)
	switch {
	case err == nil:
		current = f
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	expected := ""
	if current != nil {
		expected = current.Version
	}
	op := restoreOperation(opID, p, version, expected)
	if opID == "" && current != nil && (current.Version == version || current.Metadata[store.RestoredFromKey] == version) {
		// At that version already, or a rerun after the restore landed
		// (the derived id has changed with the version): nothing to do if
		// the content is that version's.
		old, err := a.versionSide(ctx, s, p, version, "")
		if err != nil {
			return err
		}
		if old.content == current.Content && old != absent {
			fmt.Fprintf(a.stderr, "%s: at the content of version %s already; nothing written\n", p, version)
			fmt.Fprintln(a.stdout, current.Version)
			return nil
		}
	}
	rctx, cancel := a.request(ctx)
	defer cancel()
	m, err := s.Restore(rctx, store.RestoreRequest{Path: p, Version: version, Expected: expected, Operation: &op, Metadata: maps.Clone(md)})
	switch {
	case errors.Is(err, store.ErrOperationConflict):
		return fmt.Errorf("operation id %q was used before with another path or version; nothing was restored: pick a new id: %w", op.ID, err)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%s changed after restore read it (%s when read); nothing was restored: run the command again: %w", p, orNone(expected), err)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s: cannot restore version %s (agentmem log %s lists the versions; it may have expired, or be a delete): %w", p, version, p, err)
	case err != nil:
		return fileErr(p, historyErr("restore", deadline(err, a.timeout)))
	}
	if m.Replayed {
		fmt.Fprintf(a.stderr, "%s: operation %s was applied before; nothing written again\n", p, op.ID)
	}
	fmt.Fprintln(a.stdout, m.Version)
	return nil
}

// orNone describes a version for a message: "no file" when empty.
func orNone(version string) string {
	if version == "" {
		return "no file"
	}
	return "version " + version
}
