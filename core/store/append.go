// Append: a line-oriented entry added to a file, through the driver's Appender
// or a compare-and-swap loop with backoff (Backoff).

package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// AppendRequest is one append to a file.
type AppendRequest struct {
	// Path is the file to append to; it is created when absent.
	Path string
	// Text is the entry to append. Its trailing whitespace is trimmed and
	// one newline ends it; blank text appends nothing.
	Text string
	// MaxChars bounds the resulting file, in runes (> 0).
	MaxChars int
	// Metadata is stored with the new content, as for [WriteRequest].
	Metadata map[string]string
	// Operation, when non-nil, makes the append exactly-once.
	Operation *Operation
}

// Append adds r.Text to the end of the file at r.Path as a line-oriented
// entry: the file's trailing whitespace is trimmed, then one newline, the
// text with its own trailing whitespace trimmed, and one newline (the text
// alone, and a new file, when the file is blank or absent). Blank text
// writes nothing and returns a zero Mutation. The file keeps its expiry and
// pin; an expired file counts as absent (its expiry is recorded, then the
// entry starts a new file that never expires).
//
// Append never fails because other writers change the file meanwhile. On a
// driver with an [driver.Appender] it is one request that cannot conflict
// (after one create when the file is absent). Elsewhere it reads the file
// and writes it back with a compare-and-swap, again after each conflict,
// sleeping a random time up to a ceiling that doubles with each
// consecutive conflict, from 1 ms up to 250 ms ("full jitter"). It keeps
// trying until it succeeds or ctx is done: give ctx a deadline to bound
// it; then it returns ErrConflict together with the context's error.
//
// Errors: ErrInvalidPath, ErrInvalidContent, ErrInvalidMetadata,
// ErrInvalidOperation, ErrInvalidBound (r.MaxChars <= 0), ErrTooLarge (the
// file would be over r.MaxChars runes, or already is; nothing is written),
// ErrOperationConflict, ErrConflict with ctx's error (ctx ended while the
// file kept changing), or the backend's error.
func (s *Store) Append(ctx context.Context, r AppendRequest) (m Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpWrite, Tracked: r.Operation != nil})
	defer func() { o.done(err, m.Replayed, 0); s.published(ctx, r.Path, m, err) }()
	if s.d == nil {
		return Mutation{}, ErrNoDriver
	}
	if err := ValidatePath(r.Path); err != nil {
		return Mutation{}, err
	}
	if !utf8.ValidString(r.Text) {
		return Mutation{}, ErrInvalidContent
	}
	if r.MaxChars <= 0 {
		return Mutation{}, fmt.Errorf("%w: append max chars %d", ErrInvalidBound, r.MaxChars)
	}
	meta, err := normalizeMetadata(r.Metadata)
	if err != nil {
		return Mutation{}, err
	}
	if err := validateOperation(r.Operation); err != nil {
		return Mutation{}, err
	}
	entry := strings.TrimRightFunc(r.Text, appendSpace)
	if entry == "" {
		return Mutation{}, nil
	}
	entry += "\n"
	a := appendCall{s: s, r: r, entry: entry, meta: meta}
	if r.Operation != nil && s.mutator == nil && s.appender == nil {
		// On the primitive path a lookup first spares a replay the
		// reservation; an atomic write checks the receipt itself.
		if prev, err := s.GetOperation(ctx, *r.Operation); err != nil || prev != nil {
			if prev == nil {
				return Mutation{}, err
			}
			return *prev, nil
		}
	}
	var b Backoff
	var conflict error // the last attempt's conflict
	for {
		m, err := a.attempt(ctx)
		if conflict != nil && err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// ctx ended inside an attempt after the file kept changing:
			// the same answer as when it ends between attempts.
			err = conflict
		}
		if !errors.Is(err, ErrConflict) || errors.Is(err, ErrOperationConflict) {
			return m, err
		}
		conflict = err
		if werr := b.Wait(ctx); werr != nil {
			return Mutation{}, fmt.Errorf("agentmem: append to %q: the file changed on each of %d attempts until the context ended; retry later or with a longer deadline: %w: %w", r.Path, b.Conflicts(), err, werr)
		}
	}
}

// appendSpace is the whitespace Append trims: driver.AppendSpace.
func appendSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// appendCall is one Append in progress.
type appendCall struct {
	s     *Store
	r     AppendRequest
	entry string
	meta  map[string]string
}

// attempt makes one attempt; ErrConflict means "try again".
func (a appendCall) attempt(ctx context.Context) (Mutation, error) {
	s := a.s
	if s.appender != nil {
		m, missing, err := a.native(ctx)
		if err != nil || !missing {
			return m, err
		}
		return a.write(ctx, "", a.entry, a.meta) // absent (or expired): a create, which may conflict
	}
	f, err := s.Read(ctx, a.r.Path, a.r.MaxChars)
	if err == nil && f.Truncated {
		// Over the bound, perhaps only by trailing whitespace, which is
		// trimmed before the size check (as an Appender does): the whole
		// file decides.
		f, err = s.Read(ctx, a.r.Path, math.MaxInt)
	}
	expected, next, meta := "", a.entry, a.meta
	switch {
	case err == nil:
		expected = f.Version
		meta = rowMetadata(a.meta, f.ExpiresAt, f.Pinned) // an append keeps the file's lifetime
		if kept := strings.TrimRightFunc(f.Content, appendSpace); kept != "" {
			next = kept + "\n" + a.entry
		}
	case !errors.Is(err, ErrNotFound):
		return Mutation{}, err
	}
	return a.write(ctx, expected, next, meta)
}

// write stores next with meta over the version expected, after checking
// its size.
func (a appendCall) write(ctx context.Context, expected, next string, meta map[string]string) (Mutation, error) {
	if n := utf8.RuneCountInString(next); n > a.r.MaxChars {
		return a.refuse(ctx, a.tooLarge(n))
	}
	return a.s.mutate(ctx, change{kind: driver.KindWrite, path: a.r.Path, content: next, meta: meta, expected: expected, op: a.r.Operation})
}

func (a appendCall) tooLarge(n int) error {
	return fmt.Errorf("agentmem: append to %q: the file would be %d characters, over %d; move entries to another file first: %w", a.r.Path, n, a.r.MaxChars, ErrTooLarge)
}

// refuse reports a mistake found in what was read, unless the operation
// already landed (on an atomic or appending store no lookup came first).
func (a appendCall) refuse(ctx context.Context, err error) (Mutation, error) {
	if op := a.r.Operation; op != nil && (a.s.mutator != nil || a.s.appender != nil) {
		if prev, gerr := a.s.GetOperation(ctx, *op); gerr != nil || prev != nil {
			if prev == nil {
				return Mutation{}, gerr
			}
			return *prev, nil
		}
	}
	return Mutation{}, err
}

// native appends through the driver's Appender. missing reports an absent
// file, which the caller creates.
func (a appendCall) native(ctx context.Context) (m Mutation, missing bool, err error) {
	s := a.s
	for round := 0; ; round++ {
		now := s.now()
		p := driver.AppendParams{Path: a.r.Path, Entry: a.entry, MaxChars: a.r.MaxChars, Metadata: a.meta, Version: newVersion(now, ""),
			Now: driver.FormatExpiry(now)}
		if op := a.r.Operation; op != nil && s.mutator == nil {
			// The version names the operation, as on the primitive path: an
			// Appender that is not atomic across the receipt and the file
			// (filestore writes two files) may leave its receipt pending,
			// and whoever overwrites the row then settles it first
			// (settleVersion), or a replay would find the row gone and
			// append again. An Appender that is also a Mutator records the
			// completed receipt with the file, so its rows need no
			// settling, and a write over them costs no receipt lookup.
			p.Version = newVersion(now, op.ID)
		}
		record, err := s.historyOn()
		if err != nil {
			return Mutation{}, false, err
		}
		if op := a.r.Operation; op != nil {
			rec := s.receipt(change{kind: driver.KindWrite, path: a.r.Path, op: op, record: record}, now, p.Version, true)
			p.Receipt = &rec
		}
		if record {
			// The driver fills in Previous and Content.
			p.History = s.historyEntry(change{kind: driver.KindWrite, path: a.r.Path, meta: a.meta, op: a.r.Operation}, p.Version, now)
		}
		res, err := s.appender.Append(ctx, p)
		switch {
		case errors.Is(err, driver.ErrTooLarge):
			return Mutation{}, false, fmt.Errorf("agentmem: append to %q: the file would be over %d characters; move entries to another file first: %w", a.r.Path, a.r.MaxChars, err)
		case err != nil:
			return Mutation{}, false, err
		case res.Missing:
			return Mutation{}, true, nil
		case res.Unsettled != "":
			// The file was written by an operation whose receipt is still
			// pending (its attempt died before completing it): complete it
			// while the file can prove that it landed, then append.
			if err := s.settleRow(ctx, a.r.Path, res.Unsettled); err != nil {
				return Mutation{}, false, err
			}
			if round < maxReserveRounds {
				continue
			}
			return Mutation{}, false, fmt.Errorf("%w: %q keeps being written by operations left pending", ErrConflict, a.r.Path)
		case res.Existing == nil:
			return Mutation{Version: p.Version, Existed: true}, false, nil
		}
		done, _, err := s.settleHeld(ctx, a.r.Operation, res.Existing)
		switch {
		case err != nil:
			return Mutation{}, false, err
		case done != nil:
			return replay(done), false, nil
		case round < maxReserveRounds:
			continue
		}
		return Mutation{}, false, change{path: a.r.Path, op: a.r.Operation}.contended()
	}
}

// Backoff is the wait between attempts of a compare-and-swap loop that
// adapts to contention: after the n-th consecutive conflict it sleeps a
// random time in [0, min(MaxBackoff, 1 ms × 2ⁿ⁻¹)) ("full jitter"), so
// contending writers spread out further the longer they collide. The zero
// value is ready to use; it is not safe for concurrent use.
type Backoff struct {
	n int
}

// MaxBackoff caps one wait of a [Backoff].
const MaxBackoff = 250 * time.Millisecond

// Wait records one more conflict and sleeps, returning ctx's error when
// ctx ends first (at once when it is already done).
func (b *Backoff) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.n++
	return driver.Sleep(ctx, rand.N(b.ceiling())+1)
}

// ceiling is the longest wait after b.n conflicts.
func (b *Backoff) ceiling() time.Duration {
	if b.n > 8 {
		return MaxBackoff
	}
	return min(MaxBackoff, time.Millisecond<<(b.n-1))
}

// Conflicts returns how many conflicts Wait has recorded.
func (b *Backoff) Conflicts() int { return b.n }
