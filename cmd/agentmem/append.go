package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

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
newest file starts the next one. Each rotating append records ` + pruned.AppendedAtKey + ` (its time,
RFC 3339) on the file it writes, and the operation id holds across the whole
series: a rerun is answered wherever the first run landed. Retention, applied
each time the series moves to a new file: --max-files N keeps the newest N
files (the current one included), --max-age AGE (720h, 30d) deletes each older
file whose last append is older than AGE; a file without ` + pruned.AppendedAtKey + ` is kept
until --max-files removes it. Each delete is recorded with updated_by
` + pruned.RetentionUpdatedBy + ` and ` + pruned.RetentionReasonKey + `=why (a store with history can restore it). When
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
			return a.withStore(cmd, func(ctx context.Context, s *store.Store) error {
				actx, cancel := a.request(ctx)
				defer cancel()
				var m store.Mutation
				if rotate {
					m, err = pruned.AppendSeries(actx, s, p, argv[1], opts, &pruned.RotateOptions{MaxFiles: maxFiles, MaxAge: time.Duration(maxAge)})
				} else {
					m, err = memory.Append(actx, s, p, argv[1], opts)
				}
				retention := errors.Is(err, pruned.ErrRetention) // landed; a delete failed
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
					fmt.Fprintf(a.stderr, "agentmem: %s: %v (the next rotation tries again)\n", p, strings.TrimPrefix(err.Error(), "pruned: "))
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
