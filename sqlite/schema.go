package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
)

// ddl is the schema; {T}, {R}, {H}, {TI}, {RI}, {HI} stand for the quoted
// names of the files table, the receipts table, the history table and
// their indexes. The tables are STRICT. Files and history entries keep
// rowids (they may be large); receipts are small and live in their primary
// key. The partial index finds expired tombstones without reading files.
// A file's lifetime, its metadata's store-owned keys, is copied into
// life_expires and life_pinned ("" when absent) by the statement that
// writes the metadata, so listings read two short texts and no metadata;
// the metadata stays the source (GetFile reads it). IF NOT EXISTS is the
// migration: a database made before a table existed gets it when a driver
// of this version first opens it (and a files table without the lifetime
// columns gets them, filled in: see migrateLifetime).
const ddl = `
CREATE TABLE IF NOT EXISTS {T} (
	path         TEXT PRIMARY KEY NOT NULL,
	content      TEXT NOT NULL,
	version      TEXT NOT NULL,
	operation_id TEXT,
	metadata     TEXT,
	tombstone    INTEGER NOT NULL DEFAULT 0,
	expires_at   INTEGER,
	life_expires TEXT NOT NULL DEFAULT '',
	life_pinned  TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX IF NOT EXISTS {TI} ON {T} (expires_at) WHERE tombstone;
CREATE TABLE IF NOT EXISTS {R} (
	id          TEXT PRIMARY KEY NOT NULL,
	fingerprint TEXT NOT NULL,
	kind        TEXT NOT NULL,
	path        TEXT NOT NULL,
	expected    TEXT NOT NULL,
	version     TEXT NOT NULL,
	existed     INTEGER NOT NULL,
	completed   INTEGER NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS {RI} ON {R} (expires_at);
CREATE TABLE IF NOT EXISTS {H} (
	key          TEXT PRIMARY KEY NOT NULL,
	path         TEXT NOT NULL,
	version      TEXT NOT NULL,
	previous     TEXT NOT NULL,
	kind         TEXT NOT NULL,
	operation_id TEXT,
	metadata     TEXT,
	content      TEXT NOT NULL,
	time         INTEGER,
	expires_at   INTEGER,
	pending      INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS {HI} ON {H} (expires_at);
`

func quote(name string) string { return `"` + name + `"` }

// statements holds every SQL text of one table, built once.
type statements struct {
	schema, lifetimeColumns, fillLifetime   string
	getFile, appendFile, listFiles, listAll string
	createFile, replaceFile, deleteFile     string
	getReceipt, insertReceipt               string
	completeReceipt, completedReceipt       string
	dropReceipt, receiptExists, fileExists  string
	getFiles, readScope, readAll            string
	pruneReceipts, pruneTombstones          string
	collision, snapshot, snapshotAll        string
	precheck                                string
	putHistory, getHistory                  string
	completeHistory, dropHistory            string
	historyExists                           string
	listHistory, listHistoryAll             string
	deleteHistory, deleteHistoryAll         string
	pruneHistory                            string
}

const fileCols = `path, content, version, coalesce(operation_id, ''), metadata, tombstone, expires_at`
const receiptCols = `id, fingerprint, kind, path, expected, version, existed, completed, created_at, expires_at`
const historyCols = `path, version, previous, kind, coalesce(operation_id, ''), metadata, content, time, expires_at, pending`

// lifetimeCols reads what a listing needs of a row's lifetime
// (driver.Entry.Lifetime) in the query that lists it: the two columns the
// row's writer filled from its metadata (lifetimeArgs), not the metadata.
const lifetimeCols = `life_expires, life_pinned`

// lifetimeJSON is the value of the store-owned key k in a row's metadata,
// "" when absent: for the migration only (json_extract on every listed
// row cost 1.55× its listing, the SQLite being compiled to WebAssembly).
func lifetimeJSON(k string) string {
	return `coalesce(json_extract(metadata, '$."` + k + `"'), '')`
}

func newStatements(table string) statements {
	t, r, h := quote(table), quote(table+"_receipts"), quote(table+"_history")
	// Scope reads: the range [?1, ?4) on the primary key, files directly in
	// the scope only, content cut to ?2 = MaxChars+1 characters (the extra
	// one tells truncation without counting characters) and its size in
	// bytes (see ReadScope), then its lifetime.
	scope := `SELECT path, substr(content, 1, ?2), octet_length(content), version, ` + lifetimeCols + ` FROM ` + t + `
		WHERE path >= ?1 %s AND NOT tombstone AND instr(substr(path, length(?1) + 1), '/') = 0
		ORDER BY path LIMIT ?3`
	list := `SELECT path, tombstone, ` + lifetimeCols + ` FROM ` + t + ` WHERE path >= ?1 AND path > ?2 %s ORDER BY path LIMIT ?3`
	// The file's row carries its whole metadata, a listing row its
	// lifetime (before the file columns, so fileAt reads the rest).
	snapshot := `SELECT 1, '', '', ` + fileCols + ` FROM ` + t + ` WHERE path = ?4
		UNION ALL SELECT * FROM (SELECT 0, ` + lifetimeCols + `, path, '', '', '', NULL, tombstone, NULL FROM ` + t + `
			WHERE path >= ?1 AND path > ?2 %s ORDER BY path LIMIT ?3)`
	// History pages: the range [?1, ?4) of the key, after ?2, in key order.
	listHistory := `SELECT ` + historyCols + ` FROM ` + h + ` WHERE key >= ?1 AND key > ?2 %s ORDER BY key LIMIT ?3`
	// A batch of ForgetHistory: up to ?3 keys of the range [?1, ?2).
	deleteHistory := `DELETE FROM ` + h + ` WHERE key IN (SELECT key FROM ` + h + ` WHERE key >= ?1 %s ORDER BY key LIMIT ?3)`
	return statements{
		schema: strings.NewReplacer("{TI}", quote(table+"_tomb_exp"), "{RI}", quote(table+"_rcpt_exp"), "{HI}", quote(table+"_hist_exp"),
			"{T}", t, "{R}", r, "{H}", h).Replace(ddl),
		// The lifetime columns a files table has (pragma_table_info), and
		// the fill of a table that has just got them: every row whose
		// metadata names a store-owned key (one whose metadata is not JSON
		// keeps none: GetFile reports that metadata as unreadable).
		lifetimeColumns: `SELECT name FROM pragma_table_info(?) WHERE name IN ('life_expires', 'life_pinned')`,
		fillLifetime: `UPDATE ` + t + ` SET life_expires = ` + lifetimeJSON(driver.ExpiresKey) + `, life_pinned = ` + lifetimeJSON(driver.PinnedKey) + `
			WHERE instr(metadata, '"` + driver.StoreKeyPrefix + `') AND json_valid(metadata)`,
		getFile: `SELECT ` + fileCols + ` FROM ` + t + ` WHERE path = ?`,
		// The file, after whether the operation that wrote it has its
		// receipt pending for this very row (Append refuses it then).
		appendFile: `SELECT EXISTS (SELECT 1 FROM ` + r + ` WHERE id = f.operation_id AND version = f.version AND NOT completed), ` +
			fileCols + ` FROM ` + t + ` f WHERE path = ?`,
		listFiles: fmt.Sprintf(list, `AND path < ?4`),
		listAll:   fmt.Sprintf(list, ``),
		// The lifetime columns are written with the metadata, ?8 and ?9
		// (lifetimeArgs).
		createFile: `INSERT INTO ` + t + ` (path, content, version, operation_id, metadata, tombstone, expires_at, life_expires, life_pinned)
			VALUES (?1, ?2, ?3, nullif(?4, ''), ?5, ?6, ?7, ?8, ?9) ON CONFLICT (path) DO NOTHING`,
		replaceFile: `UPDATE ` + t + ` SET content = ?2, version = ?3, operation_id = nullif(?4, ''), metadata = ?5,
			tombstone = ?6, expires_at = ?7, life_expires = ?8, life_pinned = ?9 WHERE path = ?1 AND version = ?10`,
		deleteFile: `DELETE FROM ` + t + ` WHERE path = ? AND version = ?`,
		// A mutation's condition, read before it takes the writer slot:
		// the file's version ('' for none) and whether the receipt ?2
		// exists.
		precheck: `SELECT coalesce((SELECT version FROM ` + t + ` WHERE path = ?1), ''),
			EXISTS (SELECT 1 FROM ` + r + ` WHERE id = ?2)`,
		fileExists: `SELECT EXISTS (SELECT 1 FROM ` + t + ` WHERE path = ?)`,
		getReceipt: `SELECT ` + receiptCols + ` FROM ` + r + ` WHERE id = ?`,
		insertReceipt: `INSERT INTO ` + r + ` (` + receiptCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`,
		completeReceipt: `UPDATE ` + r + ` SET fingerprint = ?3, kind = ?4, path = ?5, expected = ?6, existed = ?7,
			completed = 1, created_at = ?8, expires_at = ?9 WHERE id = ?1 AND version = ?2 AND NOT completed`,
		completedReceipt: `SELECT EXISTS (SELECT 1 FROM ` + r + ` WHERE id = ? AND version = ? AND completed)`,
		dropReceipt:      `DELETE FROM ` + r + ` WHERE id = ? AND version = ? AND NOT completed`,
		receiptExists:    `SELECT EXISTS (SELECT 1 FROM ` + r + ` WHERE id = ?)`,
		getFiles:         `SELECT ` + fileCols + ` FROM ` + t + ` WHERE path IN (SELECT value FROM json_each(?))`,
		readScope:        fmt.Sprintf(scope, `AND path < ?4`),
		readAll:          fmt.Sprintf(scope, ``),
		pruneReceipts:    `DELETE FROM ` + r + ` WHERE id IN (SELECT id FROM ` + r + ` WHERE expires_at < ?1 LIMIT ?2)`,
		pruneTombstones:  `DELETE FROM ` + t + ` WHERE path IN (SELECT path FROM ` + t + ` WHERE tombstone AND expires_at < ?1 LIMIT ?2)`,
		// A file among the ancestors ?1 (a JSON array), or one below the
		// path: in the range [?2, ?3) = [path + "/", path + "0").
		collision: `SELECT path FROM ` + t + ` WHERE path IN (SELECT value FROM json_each(?1)) AND NOT tombstone
			UNION ALL SELECT path FROM (SELECT path FROM ` + t + ` WHERE path >= ?2 AND path < ?3 AND NOT tombstone LIMIT 1)
			LIMIT 1`,
		// The file ?1 (first column 1) and a listing page (first column 0)
		// in one statement.
		snapshot:    fmt.Sprintf(snapshot, `AND path < ?5`),
		snapshotAll: fmt.Sprintf(snapshot, ``),
		// History entries are found by key, and by key and version: a key
		// holds the version's time-ordered stem only.
		putHistory: `INSERT INTO ` + h + ` (key, ` + strings.ReplaceAll(historyCols, `coalesce(operation_id, '')`, `operation_id`) + `)
			VALUES (?1, ?2, ?3, ?4, ?5, nullif(?6, ''), ?7, ?8, ?9, ?10, ?11) ON CONFLICT (key) DO NOTHING`,
		getHistory:       `SELECT ` + historyCols + ` FROM ` + h + ` WHERE key = ? AND version = ?`,
		completeHistory:  `UPDATE ` + h + ` SET pending = 0 WHERE key = ? AND version = ?`,
		dropHistory:      `DELETE FROM ` + h + ` WHERE key = ? AND version = ? AND pending`,
		historyExists:    `SELECT EXISTS (SELECT 1 FROM ` + h + ` WHERE key = ? AND version = ?)`,
		listHistory:      fmt.Sprintf(listHistory, `AND key < ?4`),
		listHistoryAll:   fmt.Sprintf(listHistory, ``),
		deleteHistory:    fmt.Sprintf(deleteHistory, `AND key < ?2`),
		deleteHistoryAll: fmt.Sprintf(deleteHistory, ``), // ?2 unused
		// Found through the expires_at index, which holds the rowids.
		pruneHistory: `DELETE FROM ` + h + ` WHERE rowid IN (SELECT rowid FROM ` + h + ` WHERE expires_at < ?1 LIMIT ?2)`,
	}
}

// checkTable reports, for Options.NoCreate, a database without the files
// table (wrapping driver.ErrStoreNotFound).
func (d *Driver) checkTable(ctx context.Context) error {
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, d.opts.Table).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: cannot open the database file %s: %w", d.path, fail(ctx, err))
	}
	if n == 0 {
		return fmt.Errorf("sqlite: the database file %s has no table %q (create it first, or open it without create=false, which creates it): %w", d.path, d.opts.Table, driver.ErrStoreNotFound)
	}
	return nil
}

// createSchema runs the DDL and migrateLifetime in one BEGIN IMMEDIATE
// transaction: processes opening one file together queue on the write
// lock, and IF NOT EXISTS (and the columns found) makes every later run a
// no-op.
func (d *Driver) createSchema(ctx context.Context) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, d.sql.schema); err != nil {
			return err
		}
		return d.migrateLifetime(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("sqlite: creating the schema in %s: %w", d.path, err)
	}
	return nil
}

// migrateLifetime gives a files table made before the lifetime columns
// existed the columns it lacks (ALTER TABLE ADD COLUMN, with their default
// "") and fills them from the metadata of the rows that have a lifetime,
// so that a store written by an earlier version lists its lifetimes. A
// process of an earlier version still writing to the file afterwards
// would leave the columns of the rows it writes behind their metadata:
// upgrade every process on one file together.
func (d *Driver) migrateLifetime(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, d.sql.lifetimeColumns, d.opts.Table)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			_ = rows.Close()
			return err
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(have) == 2 {
		return nil
	}
	for _, col := range [...]string{"life_expires", "life_pinned"} {
		if !have[col] {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE `+quote(d.opts.Table)+` ADD COLUMN `+col+` TEXT NOT NULL DEFAULT ''`); err != nil {
				return err
			}
		}
	}
	_, err = tx.ExecContext(ctx, d.sql.fillLifetime)
	return err
}
