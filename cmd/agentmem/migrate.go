package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/store"
)

// migrateOptions configures migrate.
type migrateOptions struct {
	// Prefix selects the files to copy (a plain string prefix).
	Prefix string
	// DryRun compares and counts, writing nothing.
	DryRun bool
	// Workers is how many files are copied at once (> 0).
	Workers int
	// Progress, when set, is called after each file, with the files done
	// and the total; calls are serialised.
	Progress func(done, total int)
}

// migrateReport says what migrate did.
type migrateReport struct {
	// Files is the number of files listed in the source.
	Files int
	// Created, Replaced and Unchanged count the copy's outcomes (with
	// DryRun: what would be done); Vanished counts files deleted from the
	// source after they were listed.
	Created, Replaced, Unchanged, Vanished int
	// Verified is the number of source files found identical (content,
	// metadata and lifetime) in the destination at the end; Extra counts destination
	// files under the prefix that the source lacks (migrate never deletes).
	Verified, Extra int
	// SrcDigest and DstDigest digest the source's files and their copies
	// (SHA-256 over path, content, metadata and lifetime, in path order).
	SrcDigest, DstDigest string
	// Elapsed is the copy's duration, verification excluded.
	Elapsed time.Duration
}

// copied is how many files the copy wrote.
func (r migrateReport) copied() int { return r.Created + r.Replaced }

func (a *app) migrateCmd() *cobra.Command {
	var o migrateOptions
	c := &cobra.Command{
		Use:   "migrate SRC_URL DST_URL",
		Short: "Copy every file, with its metadata, from one store to another",
		Long: `migrate copies every file whose path starts with --prefix from the store SRC_URL
to the store DST_URL, content and metadata, with its expiry and pin (a file that
expires keeps expiring at the same time; one that has expired is not copied). A file missing in DST is created; one
that differs is replaced (compare-and-swap on the version read); an identical one
is left alone. So migrate is safe to interrupt (Ctrl-C) and to rerun: a rerun
copies only what is missing or different and never duplicates anything. It never
deletes. At the end it reads both sides again and verifies that every source
file is in DST with the same content, metadata and lifetime (count and SHA-256 digest),
and reports it. --dry-run compares and counts without writing. History is not
copied: when SRC_URL has recorded changes, migrate says so, and they stay there.

Progress: a bar with rate and ETA on a terminal, plain lines otherwise.`,
		Example: `  agentmem migrate sqlite:.agent-memory.db 'postgres://app@db.internal/agents'
  agentmem migrate --prefix kamal/ --dry-run file:backup 'dynamodb://agentmem?region=eu-west-1'`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if o.Workers <= 0 {
				return usagef("migrate: --workers must be positive")
			}
			if err := store.ValidatePrefix(o.Prefix); err != nil {
				return fileErr(o.Prefix, err)
			}
			ctx := cmd.Context()
			src, err := a.openExistingWith(ctx, argv[0], nil)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := a.open(ctx, argv[1])
			if err != nil {
				return err
			}
			defer dst.Close()
			o.Progress = a.progress("migrate")
			rep, err := a.migrate(ctx, src, dst, o)
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("migrate interrupted after %d of %d files; nothing is lost: rerun the same command to copy the rest", rep.copied()+rep.Unchanged, rep.Files)
				}
				return fmt.Errorf("agentmem: migrate: %w (rerun to resume: files already copied are skipped)", err)
			}
			rate := float64(rep.Files) / max(rep.Elapsed.Seconds(), 1e-9)
			verb := "copied"
			if o.DryRun {
				verb = "would copy"
			}
			fmt.Fprintf(a.stdout, "%s %d of %d files (%d created, %d replaced, %d unchanged, %d vanished) in %v, %.0f files/s\n",
				verb, rep.copied(), rep.Files, rep.Created, rep.Replaced, rep.Unchanged, rep.Vanished, rep.Elapsed.Round(time.Millisecond), rate)
			if o.DryRun {
				return nil
			}
			fmt.Fprintf(a.stdout, "verified: %d files identical in %s and %s, digest %s\n", rep.Verified, redact(argv[0]), redact(argv[1]), rep.SrcDigest[:16])
			if rep.Extra > 0 {
				fmt.Fprintf(a.stdout, "note: %s has %d more files under %q that %s lacks (migrate never deletes)\n", redact(argv[1]), rep.Extra, o.Prefix, redact(argv[0]))
			}
			return a.historyNote(ctx, src, argv[0], argv[1], o.Prefix)
		},
	}
	c.Flags().StringVar(&o.Prefix, "prefix", "", "copy only the paths that start with `P`")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "compare and count, write nothing")
	c.Flags().IntVar(&o.Workers, "workers", 4, "files copied at once")
	return c
}

// historyNote says, when the source has recorded changes under prefix,
// that migrate copied the files and not their history.
func (a *app) historyNote(ctx context.Context, src *store.Store, srcURL, dstURL, prefix string) error {
	hctx, cancel := a.request(ctx)
	defer cancel()
	page, err := src.History(hctx, store.HistoryRequest{Prefix: prefix, Limit: 1})
	switch {
	case errors.Is(err, store.ErrHistoryUnsupported):
		return nil
	case err != nil:
		return fmt.Errorf("agentmem: migrate: the files are copied and verified; reading the history of %s failed: %w", redact(srcURL), deadline(err, a.timeout))
	case len(page.Entries) == 0:
		return nil
	}
	fmt.Fprintf(a.stdout, "note: history is not copied: the recorded changes under %q stay in %s only (agentmem log reads them there); %s records changes from now on when opened with ?history=\n", prefix, redact(srcURL), redact(dstURL))
	return nil
}

// progress returns a Progress function that draws a bar with rate and ETA
// when stderr is a terminal, and prints a line every tenth otherwise.
func (a *app) progress(what string) func(done, total int) {
	if a.isTerminal(a.stderr) {
		var bar *progressbar.ProgressBar
		return func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(a.stderr),
					progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
					progressbar.OptionShowIts(), progressbar.OptionSetItsString("files"),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionOnCompletion(func() { fmt.Fprintln(a.stderr) }))
			}
			_ = bar.Set(done)
			if done == total {
				_ = bar.Finish()
			}
		}
	}
	start := time.Now()
	last := -1
	return func(done, total int) {
		tenth := done * 10 / max(total, 1)
		if tenth == last {
			return
		}
		last = tenth
		rate := float64(done) / max(time.Since(start).Seconds(), 1e-9)
		fmt.Fprintf(a.stderr, "%s: %d/%d files (%d%%), %.0f files/s\n", what, done, total, done*100/max(total, 1), rate)
	}
}

// migrate copies the files under o.Prefix from src to dst and verifies
// the copy. It stops at the first error, or when ctx is done, with the
// counts so far.
func (a *app) migrate(ctx context.Context, src, dst *store.Store, o migrateOptions) (migrateReport, error) {
	var rep migrateReport
	paths, err := collect(ctx, src, o.Prefix)
	if err != nil {
		return rep, err
	}
	rep.Files = len(paths)
	start := time.Now()
	var mu sync.Mutex
	done := 0
	err = parallel(ctx, o.Workers, len(paths), func(ctx context.Context, i int) error {
		outcome, err := a.copyFile(ctx, src, dst, paths[i], o.DryRun)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		switch outcome {
		case putCreated:
			rep.Created++
		case putReplaced:
			rep.Replaced++
		case putUnchanged:
			rep.Unchanged++
		default:
			rep.Vanished++
		}
		done++
		if o.Progress != nil {
			o.Progress(done, len(paths))
		}
		return nil
	})
	rep.Elapsed = time.Since(start)
	if err != nil || o.DryRun {
		return rep, err
	}
	return rep, a.verify(ctx, src, dst, o, &rep)
}

// vanished is the copy outcome of a file deleted from the source after it
// was listed.
const vanished putOutcome = putDiffers

// copyFile makes dst's file at p hold src's content, metadata, expiry and
// pin.
func (a *app) copyFile(ctx context.Context, src, dst *store.Store, p string, dryRun bool) (putOutcome, error) {
	f, err := a.readFile(ctx, src, p)
	if errors.Is(err, store.ErrNotFound) {
		return vanished, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read source: %w", err)
	}
	if dryRun {
		cur, err := a.readFile(ctx, dst, p)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return putCreated, nil
		case err != nil:
			return 0, fmt.Errorf("read destination: %w", err)
		case sameFile(cur, f.Content, f.Metadata, lifetimeOf(f)):
			return putUnchanged, nil
		}
		return putReplaced, nil
	}
	return a.put(ctx, dst, p, f.Content, f.Metadata, lifetimeOf(f), true)
}

// verify reads every source file and its copy again and fills the report's
// verification fields; a missing or different copy is an error.
func (a *app) verify(ctx context.Context, src, dst *store.Store, o migrateOptions, rep *migrateReport) error {
	srcPaths, err := collect(ctx, src, o.Prefix)
	if err != nil {
		return err
	}
	dstPaths, err := collect(ctx, dst, o.Prefix)
	if err != nil {
		return err
	}
	inSrc := make(map[string]bool, len(srcPaths))
	for _, p := range srcPaths {
		inSrc[p] = true
	}
	for _, p := range dstPaths {
		if !inSrc[p] {
			rep.Extra++
		}
	}
	srcSums := make([]string, len(srcPaths))
	dstSums := make([]string, len(srcPaths))
	var mu sync.Mutex
	var differ []string
	err = parallel(ctx, o.Workers, len(srcPaths), func(ctx context.Context, i int) error {
		p := srcPaths[i]
		s, err := a.readFile(ctx, src, p)
		if err != nil {
			return fmt.Errorf("agentmem: verify: read source: %w", err)
		}
		d, err := a.readFile(ctx, dst, p)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("agentmem: verify: read destination: %w", err)
		}
		srcSums[i] = fileDigest(s)
		if d != nil {
			dstSums[i] = fileDigest(d)
		}
		if dstSums[i] != srcSums[i] {
			mu.Lock()
			differ = append(differ, p)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.SrcDigest, rep.DstDigest = treeDigest(srcSums), treeDigest(dstSums)
	rep.Verified = len(srcPaths) - len(differ)
	if len(differ) > 0 {
		return fmt.Errorf("agentmem: verify: %d of %d files differ between source and destination (first: %s); was a store written during the migration? rerun migrate", len(differ), len(srcPaths), differ[0])
	}
	return nil
}

// fileDigest digests one file's path, content, metadata and lifetime (a
// file without one digests as before lifetimes existed).
func fileDigest(f *store.File) string {
	h := sha256.New()
	md, _ := json.Marshal(f.Metadata) // sorted keys
	if len(f.Metadata) == 0 {
		md = nil
	}
	fmt.Fprintf(h, "%d:%s%d:%s%d:", len(f.Path), f.Path, len(f.Content), f.Content, len(md))
	h.Write(md)
	if l := lifetimeOf(f); !l.equal(lifetime{}) {
		fmt.Fprintf(h, "lifetime:%s:%t", jsonExpiry(l.expires), l.pinned)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// treeDigest digests the file digests, in order.
func treeDigest(sums []string) string {
	h := sha256.New()
	for _, s := range sums {
		io.WriteString(h, s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// collect lists every path under prefix.
func collect(ctx context.Context, s *store.Store, prefix string) ([]string, error) {
	var paths []string
	for p, err := range s.Walk(ctx, prefix, 0) {
		if err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// parallel runs f(i) for i in [0, n) on workers goroutines, in order of i
// as far as workers allow; it stops at the first error or when ctx is done,
// and returns that error.
func parallel(ctx context.Context, workers, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) { once.Do(func() { first = err; cancel() }) }
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					fail(err)
				}
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
