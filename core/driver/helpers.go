package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// This file holds helpers for driver authors: they are not part of the
// contract above, which lives in driver.go.

// CutRunes returns the first n runes of s and whether s was longer (n <= 0
// keeps nothing). Drivers use it for ScopeReader bounds; it never splits a
// rune.
func CutRunes(s string, n int) (string, bool) {
	if n <= 0 {
		return "", s != ""
	}
	if len(s) <= n { // bytes ≥ runes
		return s, false
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

// PrefixEnd returns the least string greater than every string that starts
// with prefix in code-point order (= UTF-8 byte order), and false when there
// is none (an empty prefix). Drivers use it for range scans:
// prefix <= path < PrefixEnd(prefix).
func PrefixEnd(prefix string) (string, bool) {
	for prefix != "" {
		r, n := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-n]
		if r == utf8.MaxRune || (r == utf8.RuneError && n == 1) {
			continue
		}
		if r++; r == 0xD800 {
			r = 0xE000 // past the surrogates
		}
		return prefix + string(r), true
	}
	return "", false
}

// PruneBatches runs each batch in turn, again and again until it removes
// fewer than size rows (a short batch: nothing more expired), and returns
// the rows removed in all. SQL drivers use it for [Pruner]: one bounded
// DELETE per batch, each its own transaction, so that a prune never holds
// what writers need for longer than one batch. It stops at the first error
// (returning the rows removed so far) or when ctx is done.
func PruneBatches(ctx context.Context, size int, batches ...func(ctx context.Context) (int, error)) (int, error) {
	total := 0
	for _, batch := range batches {
		for {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			n, err := batch(ctx)
			total += n
			if err != nil {
				return total, err
			}
			if n < size {
				break
			}
		}
	}
	return total, nil
}

// Sleep waits for d, or until ctx is done (returning its error). Drivers and
// the store use it for retry backoff.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ContextError returns err with ctx's error added to its chain when ctx is
// done and err does not already say so (SDKs often report an interrupted
// call in their own words), so that errors.Is(err, context.Canceled) holds.
// It returns nil for a nil err.
func ContextError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// AppendedContent returns the content an [Appender] stores when it appends
// entry to current: current without its trailing [AppendSpace], then "\n"
// and entry, or entry alone when nothing is left. Drivers that append in
// Go (under a mutex or a file lock) use it; SQL drivers compute the same.
func AppendedContent(current, entry string) string {
	kept := strings.TrimRight(current, AppendSpace)
	if kept == "" {
		return entry
	}
	return kept + "\n" + entry
}
