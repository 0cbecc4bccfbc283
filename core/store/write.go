// The write path's entry points. Write and Delete validate their request and
// hand one change to mutate, which picks its path: the driver's atomic Mutate
// (atomic.go), one plain conditional primitive, or the receipt algorithm (receipt.go).

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Write stores r.Content at r.Path if the path's version is r.Expected
// ("" = absent). With r.Operation it is exactly-once: a known operation
// returns its original result with Replayed set and writes nothing.
//
// A create (Expected "") is refused with ErrPathCollision when a file lies
// on the path's way or below it; see the package doc for what that costs.
//
// Errors: ErrInvalidPath, ErrInvalidContent, ErrInvalidMetadata, ErrInvalidLifetime,
// ErrInvalidOperation, ErrPathCollision, ErrOperationConflict (checked before the version), ErrConflict,
// ErrTooLarge, or the backend's error (the outcome is then settled by a
// later replay or mutation of the path).
func (s *Store) Write(ctx context.Context, r WriteRequest) (m Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpWrite, Create: r.Expected == "", Tracked: r.Operation != nil})
	defer func() { o.done(err, m.Replayed, 0); s.published(ctx, r.Path, m, err) }()
	if s.d == nil {
		return Mutation{}, ErrNoDriver
	}
	if err := ValidatePath(r.Path); err != nil {
		return Mutation{}, err
	}
	if !utf8.ValidString(r.Content) {
		return Mutation{}, ErrInvalidContent
	}
	meta, err := normalizeMetadata(r.Metadata)
	if err != nil {
		return Mutation{}, err
	}
	if err := checkLifetime(r.ExpiresAt, r.Pinned); err != nil {
		return Mutation{}, err
	}
	if err := validateOperation(r.Operation); err != nil {
		return Mutation{}, err
	}
	meta = rowMetadata(meta, r.ExpiresAt, r.Pinned)
	return s.mutate(ctx, change{kind: driver.KindWrite, path: r.Path, content: r.Content, meta: meta, expected: r.Expected, op: r.Operation})
}

// Delete removes r.Path if its version is r.Expected. Deleting an absent
// path with Expected "" succeeds with Existed false. With r.Operation it is
// exactly-once. Errors as for Write.
func (s *Store) Delete(ctx context.Context, r DeleteRequest) (m Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpDelete, Tracked: r.Operation != nil})
	defer func() { o.done(err, m.Replayed, 0); s.published(ctx, r.Path, m, err) }()
	if s.d == nil {
		return Mutation{}, ErrNoDriver
	}
	if err := ValidatePath(r.Path); err != nil {
		return Mutation{}, err
	}
	meta, err := normalizeMetadata(r.Metadata)
	if err != nil {
		return Mutation{}, err
	}
	if err := validateOperation(r.Operation); err != nil {
		return Mutation{}, err
	}
	return s.mutate(ctx, change{kind: driver.KindDelete, path: r.Path, expected: r.Expected, op: r.Operation, meta: meta})
}

// GetOperation returns the recorded result of op, with Replayed set, or nil
// when op is unknown (or was attempted but never landed, which it settles).
// A known id with another fingerprint is ErrOperationConflict.
func (s *Store) GetOperation(ctx context.Context, op Operation) (m *Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpGetOperation})
	defer func() { o.done(err, m != nil, boolInt(m != nil)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := validateOperation(&op); err != nil {
		return nil, err
	}
	r, err := s.d.GetReceipt(ctx, op.ID)
	if err != nil || r == nil {
		return nil, err
	}
	if r, _, err = s.settleHeld(ctx, &op, r); err != nil || r == nil {
		return nil, err
	}
	res := replay(r)
	return &res, nil
}

func validateOperation(op *Operation) error {
	if op == nil {
		return nil
	}
	for _, f := range [...]struct{ name, v string }{{"id", op.ID}, {"fingerprint", op.Fingerprint}} {
		name, v := f.name, f.v
		if v == "" || utf8.RuneCountInString(v) > MaxOperationIDChars || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return fmt.Errorf("%w: %s must be 1-%d chars of valid UTF-8 without NUL", ErrInvalidOperation, name, MaxOperationIDChars)
		}
	}
	return nil
}

// change is one validated mutation.
type change struct {
	kind     driver.Kind
	path     string
	content  string
	meta     map[string]string
	expected string
	op       *Operation
	// record: history is on, so the change records an entry.
	record bool
	// madeUp: op was made up by the store so that the change could be
	// recorded over the primitives; the caller gave none.
	madeUp bool
}

// recorded reports whether c changes something that the history records
// (a delete of a path expected absent changes nothing).
func (c change) recorded() bool {
	return c.record && (c.kind == driver.KindWrite || c.expected != "")
}

func (c change) verb() string {
	if c.kind == driver.KindDelete {
		return "deleted"
	}
	return "written"
}

// creates reports whether c creates a file: a write that expects the path
// to be absent. Only a create can make a file and a folder share a name.
func (c change) creates() bool { return c.kind == driver.KindWrite && c.expected == "" }

// conflict wraps a driver precondition failure as ErrConflict.
func (c change) conflict(err error) error {
	return conflictError(c.path, c.verb(), err)
}

// contended reports an operation whose receipt or path kept changing under
// concurrent attempts: a conflict, so the caller re-reads and retries.
func (c change) contended() error {
	return fmt.Errorf("%w: operation %q on %q is contended", ErrConflict, c.op.ID, c.path)
}

// mutate is mutateOnce, again once when a change that expects no file
// finds an expired one there, or a create finds one on its way or below
// it: the expiry is recorded first (a delete by ExpiryUpdatedBy), so that
// for every writer an expired file is absent.
func (s *Store) mutate(ctx context.Context, c change) (Mutation, error) {
	m, err := s.mutateOnce(ctx, c)
	switch {
	case c.creates() && errors.Is(err, ErrPathCollision):
		// A driver that checks collisions itself sees an expired file on
		// the way as a file: the store's check records its expiry, and the
		// create goes again when nothing live blocks it.
		if cerr := s.checkCollision(ctx, c.path); cerr != nil {
			return m, err
		}
		return s.mutateOnce(ctx, c)
	case c.expected != "" || !errors.Is(err, ErrConflict) || errors.Is(err, ErrOperationConflict):
		return m, err
	}
	if ok, eerr := s.expireAt(ctx, c.path); eerr != nil || !ok {
		return m, err
	}
	return s.mutateOnce(ctx, c)
}

// mutateOnce applies the validated change c on its path: the driver's atomic
// Mutate when it has one (atomic.go); otherwise, over the nine primitives,
// a plain conditional write when c has no operation and records no
// history (mutatePlain), else the receipt algorithm (receipt.go).
func (s *Store) mutateOnce(ctx context.Context, c change) (Mutation, error) {
	if err := ctx.Err(); err != nil {
		return Mutation{}, err
	}
	var err error
	if c.record, err = s.historyOn(); err != nil {
		return Mutation{}, err
	}
	switch {
	case s.mutator != nil:
		return s.mutateAtomic(ctx, c)
	case c.op == nil && !c.record:
		return s.mutatePlain(ctx, c)
	default:
		if c.op == nil {
			// Over the primitives only the receipt algorithm can tie an
			// entry to its change, so an untracked change gets an
			// operation of its own.
			c.op = &Operation{ID: madeUpOperation + newVersion(s.now(), ""), Fingerprint: madeUpOperation}
			c.madeUp = true
		}
		return s.mutateTracked(ctx, c)
	}
}

// mutatePlain applies a change without an operation over the primitives.
func (s *Store) mutatePlain(ctx context.Context, c change) (Mutation, error) {
	if err := s.settleVersion(ctx, c.path, c.expected); err != nil {
		return Mutation{}, err
	}
	var err error
	m := Mutation{Existed: c.expected != ""}
	switch {
	case c.kind == driver.KindWrite:
		m.Version = newVersion(s.now(), "")
		f := driver.File{Path: c.path, Content: c.content, Version: m.Version, Metadata: c.meta}
		if c.expected == "" {
			if err = s.checkCollision(ctx, c.path); err == nil {
				err = s.createOver(ctx, f)
			}
		} else {
			err = s.d.ReplaceFile(ctx, f, c.expected)
		}
	case c.expected == "":
		err = s.checkAbsent(ctx, c.path)
	default:
		err = s.d.DeleteFile(ctx, c.path, c.expected)
	}
	if err != nil {
		if isPrecondition(err) {
			return Mutation{}, c.conflict(err)
		}
		return Mutation{}, err
	}
	return m, nil
}

// createOver creates f where no file exists, replacing a tombstone if one
// stands there (after settling the operation it records).
func (s *Store) createOver(ctx context.Context, f driver.File) error {
	for range 4 {
		err := s.d.CreateFile(ctx, f)
		if err == nil || !isPrecondition(err) {
			return err
		}
		cur, gerr := s.d.GetFile(ctx, f.Path)
		if gerr != nil {
			return gerr
		}
		if cur == nil {
			continue // removed meanwhile
		}
		if !cur.Tombstone {
			return err
		}
		if err := s.settleVersion(ctx, f.Path, cur.Version); err != nil {
			return err
		}
		if err = s.d.ReplaceFile(ctx, f, cur.Version); err == nil || !isPrecondition(err) {
			return err
		}
	}
	return fmt.Errorf("path keeps changing: %w", driver.ErrPrecondition)
}

// checkAbsent is the condition of a delete that expects no file.
func (s *Store) checkAbsent(ctx context.Context, path string) error {
	f, err := s.d.GetFile(ctx, path)
	if err != nil {
		return err
	}
	if f != nil && !f.Tombstone {
		return fmt.Errorf("file exists: %w", driver.ErrPrecondition)
	}
	return nil
}

func isPrecondition(err error) bool { return errors.Is(err, driver.ErrPrecondition) }

// refused reports a driver error that guarantees nothing was written.
func refused(err error) bool {
	return errors.Is(err, driver.ErrTooLarge) || errors.Is(err, driver.ErrPathEscape) || errors.Is(err, driver.ErrReservedPath) ||
		errors.Is(err, driver.ErrPathCollision)
}
