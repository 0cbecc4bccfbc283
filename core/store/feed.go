// The change feed: what the store tells its indexes after each mutation
// that lands.

package store

import (
	"context"
	"errors"
)

// published tells the store's search engine that the file at p changed: once per
// mutation that landed (m, err its result), never for a replay, which
// changed nothing, nor for a mutation refused before it could land. A
// backend error leaves the outcome unknown, so the indexes look at the
// file again.
// ctx, the mutation's, only links the background work it starts (see
// indexJob.origin).
func (s *Store) published(ctx context.Context, p string, m Mutation, err error) {
	if s.search == nil || m.Replayed || unchanged(err) {
		return
	}
	s.search.Changed(ctx, p, err == nil)
}

// unchanged reports whether err says a mutation changed nothing.
func unchanged(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{ErrConflict, ErrOperationConflict, ErrInvalidPath, ErrInvalidContent, ErrInvalidMetadata,
		ErrInvalidOperation, ErrPathCollision, ErrTooLarge, ErrNoDriver, ErrReservedPath, ErrPathEscape, ErrNotFound} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
