package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/ncruces/go-sqlite3"
)

// ErrInvalidTable reports a table name that is not 1–52 characters of
// [A-Za-z0-9_] starting with a letter or an underscore (the rule the
// PostgreSQL driver uses too, so one name works on both).
var ErrInvalidTable = errors.New("sqlite: invalid table name")

// ErrInvalidPath reports an empty database path or ":memory:" (each pooled
// connection would get a database of its own; use core/memstore instead).
var ErrInvalidPath = errors.New("sqlite: invalid database path")

// fail keeps a context error visible to errors.Is when SQLite reports the
// interruption in its own words.
func fail(ctx context.Context, err error) error { return driver.ContextError(ctx, err) }

// applied maps a conditional statement's result to the driver contract:
// no row changed is driver.ErrPrecondition, and a value over SQLite's
// length limit (SQLITE_TOOBIG, refused before anything is written) is
// driver.ErrTooLarge.
func applied(ctx context.Context, res sql.Result, err error) error {
	if errors.Is(err, sqlite3.TOOBIG) {
		return fmt.Errorf("%w: %w", driver.ErrTooLarge, err)
	}
	if err != nil {
		return fail(ctx, err)
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return err
	case n == 0:
		return driver.ErrPrecondition
	}
	return nil
}
