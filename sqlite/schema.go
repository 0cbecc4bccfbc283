package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ddl is the schema; {T}, {R}, {TI}, {RI} stand for the quoted names of the
// files table, the receipts table and their indexes. Both tables are
// STRICT. Files keep rowids (a file may be large); receipts are small and
// live in their primary key. The partial index finds expired tombstones
// without reading files.
const ddl = `
CREATE TABLE IF NOT EXISTS {T} (
	path         TEXT PRIMARY KEY NOT NULL,
	content      TEXT NOT NULL,
	version      TEXT NOT NULL,
	operation_id TEXT,
	metadata     TEXT,
	tombstone    INTEGER NOT NULL DEFAULT 0,
	expires_at   INTEGER
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
`

func quote(name string) string { return `"` + name + `"` }

// statements holds every SQL text of one table, built once.
type statements struct {
	schema                                 string
	getFile, listFiles, listAll            string
	createFile, replaceFile, deleteFile    string
	getReceipt, insertReceipt              string
	completeReceipt, completedReceipt      string
	dropReceipt, receiptExists, fileExists string
	getFiles, readScope, readAll           string
	pruneReceipts, pruneTombstones         string
	receiptsBefore                         string
	collision, snapshot, snapshotAll       string
	precheck                               string
}

const fileCols = `path, content, version, coalesce(operation_id, ''), metadata, tombstone, expires_at`
const receiptCols = `id, fingerprint, kind, path, expected, version, existed, completed, created_at, expires_at`

func newStatements(table string) statements {
	t, r := quote(table), quote(table+"_receipts")
	// Scope reads: the range [?1, ?4) on the primary key, files directly in
	// the scope only, content cut to ?2 = MaxChars+1 characters (the extra
	// one tells truncation without counting characters) and its size in
	// bytes (see ReadScope).
	scope := `SELECT path, substr(content, 1, ?2), octet_length(content) FROM ` + t + `
		WHERE path >= ?1 %s AND NOT tombstone AND instr(substr(path, length(?1) + 1), '/') = 0
		ORDER BY path LIMIT ?3`
	list := `SELECT path, tombstone FROM ` + t + ` WHERE path >= ?1 AND path > ?2 %s ORDER BY path LIMIT ?3`
	snapshot := `SELECT 1, ` + fileCols + ` FROM ` + t + ` WHERE path = ?4
		UNION ALL SELECT * FROM (SELECT 0, path, '', '', '', NULL, tombstone, NULL FROM ` + t + `
			WHERE path >= ?1 AND path > ?2 %s ORDER BY path LIMIT ?3)`
	return statements{
		schema: strings.NewReplacer("{TI}", quote(table+"_tomb_exp"), "{RI}", quote(table+"_rcpt_exp"),
			"{T}", t, "{R}", r).Replace(ddl),
		getFile:   `SELECT ` + fileCols + ` FROM ` + t + ` WHERE path = ?`,
		listFiles: fmt.Sprintf(list, `AND path < ?4`),
		listAll:   fmt.Sprintf(list, ``),
		createFile: `INSERT INTO ` + t + ` (path, content, version, operation_id, metadata, tombstone, expires_at)
			VALUES (?1, ?2, ?3, nullif(?4, ''), ?5, ?6, ?7) ON CONFLICT (path) DO NOTHING`,
		replaceFile: `UPDATE ` + t + ` SET content = ?2, version = ?3, operation_id = nullif(?4, ''), metadata = ?5,
			tombstone = ?6, expires_at = ?7 WHERE path = ?1 AND version = ?8`,
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
		receiptsBefore:   `DELETE FROM ` + r + ` WHERE created_at < ?`,
		// A file among the ancestors ?1 (a JSON array), or one below the
		// path: in the range [?2, ?3) = [path + "/", path + "0").
		collision: `SELECT path FROM ` + t + ` WHERE path IN (SELECT value FROM json_each(?1)) AND NOT tombstone
			UNION ALL SELECT path FROM (SELECT path FROM ` + t + ` WHERE path >= ?2 AND path < ?3 AND NOT tombstone LIMIT 1)
			LIMIT 1`,
		// The file ?1 (first column 1) and a listing page (first column 0)
		// in one statement.
		snapshot:    fmt.Sprintf(snapshot, `AND path < ?5`),
		snapshotAll: fmt.Sprintf(snapshot, ``),
	}
}

// createSchema runs the DDL in one BEGIN IMMEDIATE transaction: processes
// opening one file together queue on the write lock, and IF NOT EXISTS
// makes every later run a no-op.
func (d *Driver) createSchema(ctx context.Context) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, d.sql.schema)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: creating the schema in %s: %w", d.path, err)
	}
	return nil
}
