package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaVersion is stored as the comment of the mutation function; a
// process that finds it skips the DDL (and its locks) entirely. Bump it
// whenever the DDL below changes: the next process to start then replaces
// the function under the advisory lock. (A changed argument list makes a
// new overload instead: the DDL must then drop the old signature, and the
// check looks the function up by its whole signature, so an old overload
// an older process recreates never hides the current one.) Schema 4 adds
// the history table and the history arguments of both functions; schema 5
// makes the append function refuse a row whose operation's receipt is
// pending (CodeUnsettled); schema 6 gives the append function the store's
// clock (p_now: a row expired by then counts as missing) and makes it
// carry the replaced row's lifetime into the appended row and its history
// entry, whose metadata is now the row's (h_metadata goes), so it drops
// the append function of schemas 4–5.
const schemaVersion = "agentmem schema 6"

// mutateArgs is the mutation function's signature.
const mutateArgs = `p_kind text, p_path text, p_content text, p_content_bytes bytea, p_metadata jsonb, p_expected text, p_version text,
	r_id text, r_fingerprint text, r_kind text, r_path text, r_expected text, r_version text,
	r_existed boolean, r_completed boolean, r_created_at timestamptz, r_expires_at timestamptz,
	h_key text, h_path text, h_version text, h_previous text, h_kind text, h_operation_id text, h_metadata jsonb,
	h_content text, h_content_bytes bytea, h_at timestamptz, h_expires_at timestamptz`

const mutateTypes = `text, text, text, bytea, jsonb, text, text, text, text, text, text, text, text, boolean, boolean, timestamptz, timestamptz, ` +
	`text, text, text, text, text, text, jsonb, text, bytea, timestamptz, timestamptz`

// appendArgs is the append function's signature.
const appendArgs = `p_path text, p_entry text, p_entry_bytes bytea, p_space text, p_max int,
	p_metadata jsonb, p_version text, p_now text, r_id text, r_fingerprint text, r_created_at timestamptz, r_expires_at timestamptz,
	h_key text, h_path text, h_version text, h_kind text, h_operation_id text, h_at timestamptz, h_expires_at timestamptz`

// oldMutateTypes and oldAppendTypes are the signatures of schemas 1–3,
// which schema 4 drops, and oldAppendTypes5 the append function's of
// schemas 4–5, which schema 6 drops: a changed argument list would
// otherwise leave the old function beside the new one.
const (
	oldMutateTypes  = `text, text, text, bytea, jsonb, text, text, text, text, text, text, text, text, boolean, boolean, timestamptz, timestamptz`
	oldAppendTypes  = `text, text, bytea, text, int, jsonb, text, text, text, timestamptz, timestamptz`
	oldAppendTypes5 = `text, text, bytea, text, int, jsonb, text, text, text, timestamptz, timestamptz, ` +
		`text, text, text, text, text, jsonb, timestamptz, timestamptz`
)

// ddl returns the schema script. {T}, {R}, {H}, {F}, {A} stand for the
// quoted names of the files table, the receipts table, the history table,
// the mutation function and the append function.
//
// The files table keeps tombstones (rows standing for a deleted file on the
// primitive path) with their expiry; the partial index lets a prune find
// the expired ones without scanning files. Receipts are their own rows.
// PostgreSQL text cannot hold NUL: content that contains one is kept whole
// in content_bytes (UTF-8), and content then shows each NUL as U+FFFD for
// people and SQL; readers prefer content_bytes when it is set.
//
// The mutation function is the driver's one-round-trip atomic mutation.
// The receipt is inserted first, so concurrent attempts of one operation
// queue on its unique index; a known receipt is returned as the function's
// single row and nothing is written. Then the version check and the
// change: a failed check raises SQLSTATE ZM412, which aborts the statement
// and so also removes the receipt just inserted. Zero rows back means the
// mutation applied.
//
// History entries (driver.Historian) are rows of the history table, keyed
// by driver.HistoryKey, so one file's entries, or a folder's, are a range
// of its primary key, newest first within a file; the expires_at index
// lets a prune find the expired ones. Given an entry (h_key not NULL),
// the mutation and append functions insert it after the change, in the
// same statement: an aborted change takes its entry with it, and a replay
// or a failed check (which return or raise before) records none. The
// mutation passes h_content NULL when the entry's content is the file's,
// so the content crosses the wire once.
//
// The append function is the driver's one-round-trip append: the receipt
// first (as in the mutation function), then the file's row locked FOR
// UPDATE, so concurrent appends queue on the row instead of conflicting;
// a missing file (ZM404: also a row whose driver.ExpiresKey value is at
// or before p_now, compared as "C" strings) or an append over the bound
// (ZM413) aborts the statement, the receipt with it. The appended row's
// metadata, and its history entry's, is p_metadata (which holds no
// store-owned key) with the replaced row's driver.ExpiresKey and
// driver.PinnedKey values carried over: driver.KeepLifetime, in SQL.
//
// A create first checks that no file lies on its way or below it (SQLSTATE
// ZM409 otherwise, nothing written). To make the check atomic under READ
// COMMITTED it takes transaction-scoped advisory locks: shared on each
// ancestor path, exclusive on the path itself, shallowest first (so no
// two creates can deadlock). A file and a file below it both lock the
// former's path, so their creates queue; each statement after the lock
// sees what the other committed. Creates of siblings share their locks.
const ddl = `
CREATE TABLE IF NOT EXISTS {T} (
	path         text COLLATE "C" PRIMARY KEY,
	content      text NOT NULL,
	content_bytes bytea,
	version      text NOT NULL,
	operation_id text,
	metadata     jsonb,
	tombstone    boolean NOT NULL DEFAULT false,
	expires_at   timestamptz
);
CREATE INDEX IF NOT EXISTS {TI} ON {T} (expires_at) WHERE tombstone;
CREATE TABLE IF NOT EXISTS {R} (
	id          text PRIMARY KEY,
	fingerprint text NOT NULL,
	kind        text NOT NULL,
	path        text COLLATE "C" NOT NULL,
	expected    text NOT NULL,
	version     text NOT NULL,
	existed     boolean NOT NULL,
	completed   boolean NOT NULL,
	created_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS {RI} ON {R} (expires_at);
CREATE TABLE IF NOT EXISTS {H} (
	key           text COLLATE "C" PRIMARY KEY,
	path          text COLLATE "C" NOT NULL,
	version       text NOT NULL,
	previous      text NOT NULL,
	kind          text NOT NULL,
	operation_id  text,
	metadata      jsonb,
	content       text NOT NULL,
	content_bytes bytea,
	changed_at    timestamptz NOT NULL,
	expires_at    timestamptz,
	pending       boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS {HI} ON {H} (expires_at);
DROP FUNCTION IF EXISTS {F}({OLDF});
DROP FUNCTION IF EXISTS {A}({OLDA});
DROP FUNCTION IF EXISTS {A}({OLDA5});
CREATE OR REPLACE FUNCTION {F}({ARGS})
RETURNS SETOF {R} LANGUAGE plpgsql AS $fn$
DECLARE
	anc text[] := '{}';
BEGIN
	IF r_id IS NOT NULL THEN
		LOOP
			INSERT INTO {R} (id, fingerprint, kind, path, expected, version, existed, completed, created_at, expires_at)
			VALUES (r_id, r_fingerprint, r_kind, r_path, r_expected, r_version, r_existed, r_completed, r_created_at, r_expires_at)
			ON CONFLICT (id) DO NOTHING;
			EXIT WHEN FOUND;
			RETURN QUERY SELECT * FROM {R} WHERE id = r_id;
			IF FOUND THEN
				RETURN;
			END IF;
			-- Pruned in between: try again.
		END LOOP;
	END IF;
	IF p_kind = 'delete' AND p_expected = '' THEN
		IF EXISTS (SELECT FROM {T} WHERE path = p_path) THEN
			RAISE EXCEPTION 'agentmem: % exists', p_path USING ERRCODE = 'ZM412';
		END IF;
		RETURN;
	ELSIF p_kind = 'delete' THEN
		DELETE FROM {T} WHERE path = p_path AND version = p_expected;
	ELSIF p_expected = '' THEN
		FOR i IN 1 .. char_length(p_path) LOOP
			IF substr(p_path, i, 1) = '/' THEN
				anc := anc || left(p_path, i - 1);
				PERFORM pg_advisory_xact_lock_shared(hashtextextended('{TN}:' || left(p_path, i - 1), 0));
			END IF;
		END LOOP;
		PERFORM pg_advisory_xact_lock(hashtextextended('{TN}:' || p_path, 0));
		IF EXISTS (SELECT FROM {T} WHERE path = ANY (anc) AND NOT tombstone)
			OR EXISTS (SELECT FROM {T} WHERE path >= p_path || '/' AND path < p_path || '0' AND NOT tombstone) THEN
			RAISE EXCEPTION 'agentmem: % collides with a file on its way or below it', p_path USING ERRCODE = 'ZM409';
		END IF;
		INSERT INTO {T} (path, content, content_bytes, version, operation_id, metadata)
		VALUES (p_path, p_content, p_content_bytes, p_version, r_id, p_metadata)
		ON CONFLICT (path) DO NOTHING;
	ELSE
		UPDATE {T} SET content = p_content, content_bytes = p_content_bytes, version = p_version, operation_id = r_id,
			metadata = p_metadata, tombstone = false, expires_at = NULL
		WHERE path = p_path AND version = p_expected;
	END IF;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'agentmem: % is not at version %', p_path, p_expected USING ERRCODE = 'ZM412';
	END IF;
	IF h_key IS NOT NULL THEN
		INSERT INTO {H} (key, path, version, previous, kind, operation_id, metadata, content, content_bytes, changed_at, expires_at, pending)
		VALUES (h_key, h_path, h_version, h_previous, h_kind, h_operation_id, h_metadata,
			COALESCE(h_content, p_content), CASE WHEN h_content IS NULL THEN p_content_bytes ELSE h_content_bytes END,
			h_at, h_expires_at, false);
	END IF;
END
$fn$;
CREATE OR REPLACE FUNCTION {A}({AARGS})
RETURNS SETOF {R} LANGUAGE plpgsql AS $fn$
DECLARE
	cur record;
	meta jsonb;
	kept text;
	next text;
	next_bytes bytea;
BEGIN
	IF r_id IS NOT NULL THEN
		LOOP
			INSERT INTO {R} (id, fingerprint, kind, path, expected, version, existed, completed, created_at, expires_at)
			VALUES (r_id, r_fingerprint, 'write', p_path, '', p_version, true, true, r_created_at, r_expires_at)
			ON CONFLICT (id) DO NOTHING;
			EXIT WHEN FOUND;
			RETURN QUERY SELECT * FROM {R} WHERE id = r_id;
			IF FOUND THEN
				RETURN;
			END IF;
		END LOOP;
	END IF;
	SELECT version, content, content_bytes, operation_id, metadata INTO cur FROM {T} WHERE path = p_path AND NOT tombstone FOR UPDATE;
	IF NOT FOUND OR (cur.metadata->>'{EXPIRES}') COLLATE "C" <= p_now THEN
		-- An expired row is no file: the store records its expiry and
		-- creates the file anew.
		RAISE EXCEPTION 'agentmem: % does not exist', p_path USING ERRCODE = 'ZM404';
	END IF;
	IF cur.operation_id <> '' AND EXISTS (SELECT FROM {R} WHERE id = cur.operation_id AND version = cur.version AND NOT completed) THEN
		-- The row may be the only evidence that its operation landed: the
		-- store completes that receipt first (the version in DETAIL).
		RAISE EXCEPTION 'agentmem: % was written by an operation whose receipt is pending', p_path
			USING ERRCODE = 'ZM428', DETAIL = cur.version;
	END IF;
	kept := rtrim(cur.content, p_space);
	next := CASE WHEN kept = '' THEN p_entry ELSE kept || E'\n' || p_entry END;
	IF char_length(next) > p_max THEN
		RAISE EXCEPTION 'agentmem: % would be % characters, over %', p_path, char_length(next), p_max USING ERRCODE = 'ZM413';
	END IF;
	IF cur.content_bytes IS NOT NULL OR p_entry_bytes IS NOT NULL THEN
		-- NUL somewhere: the same append on the exact bytes. The text form
		-- differs only in NUL shown as U+FFFD, which is no space, so the
		-- trailing space is the same in both.
		next_bytes := COALESCE(cur.content_bytes, convert_to(cur.content, 'UTF8'));
		next_bytes := substring(next_bytes FROM 1 FOR octet_length(next_bytes) -
			octet_length(convert_to(right(cur.content, char_length(cur.content) - char_length(kept)), 'UTF8')));
		next_bytes := CASE WHEN kept = '' THEN ''::bytea ELSE next_bytes || '\x0a'::bytea END ||
			COALESCE(p_entry_bytes, convert_to(p_entry, 'UTF8'));
	END IF;
	meta := NULLIF(COALESCE(p_metadata, '{}') || jsonb_strip_nulls(jsonb_build_object(
		'{EXPIRES}', cur.metadata->'{EXPIRES}', '{PINNED}', cur.metadata->'{PINNED}')), '{}');
	UPDATE {T} SET content = next, content_bytes = next_bytes, version = p_version, operation_id = r_id, metadata = meta
	WHERE path = p_path;
	IF r_id IS NOT NULL THEN
		UPDATE {R} SET expected = cur.version WHERE id = r_id;
	END IF;
	IF h_key IS NOT NULL THEN
		INSERT INTO {H} (key, path, version, previous, kind, operation_id, metadata, content, content_bytes, changed_at, expires_at, pending)
		VALUES (h_key, h_path, h_version, cur.version, h_kind, h_operation_id, meta, next, next_bytes, h_at, h_expires_at, false);
	END IF;
END
$fn$;
COMMENT ON FUNCTION {F}({TYPES}) IS '{VERSION}';
`

// CodePrecondition is the SQLSTATE the mutation function raises when the
// version check fails. Class ZM is not used by PostgreSQL.
const CodePrecondition = "ZM412"

// CodeMissing is the SQLSTATE the append function raises when there is no
// file to append to (the store then creates it).
const CodeMissing = "ZM404"

// CodeUnsettled is the SQLSTATE the append function raises when the file
// was written by an operation whose receipt is still pending; its DETAIL is
// the file's version, which the store settles before it appends again.
const CodeUnsettled = "ZM428"

// CodeTooLarge is the SQLSTATE the append function raises when the file
// would grow over the bound it is given.
const CodeTooLarge = "ZM413"

// CodeCollision is the SQLSTATE the mutation function raises when a create
// would make a file and a folder share a path.
const CodeCollision = "ZM409"

// quote quotes a validated identifier.
func quote(name string) string { return `"` + name + `"` }

// statements holds every SQL text of one table, built once.
type statements struct {
	table                                       string
	schemaCheck, schema, tableExists            string
	getFile, listFiles, listAll                 string
	createFile, replaceFile, deleteFile         string
	getReceipt, reserveReceipt                  string
	completeReceipt, completedReceipt           string
	dropReceipt, receiptExists                  string
	mutate, getFiles, readScope, readAll        string
	pruneReceiptBatch, pruneTombBatch           string
	snapshot, snapshotAll                       string
	append                                      string
	mutateSignature                             string
	putHistory, getHistory                      string
	completeHistory, dropHistory, historyExists string
	listHistory, listHistoryAll                 string
	deleteHistoryBatch, deleteHistoryAll        string
	pruneHistoryBatch                           string
}

const fileCols = `path, content, content_bytes, version, COALESCE(operation_id, ''), metadata::text, tombstone, expires_at`
const receiptCols = `id, fingerprint, kind, path, expected, version, existed, completed, created_at, expires_at`
const historyCols = `path, version, previous, kind, COALESCE(operation_id, ''), metadata::text, content, content_bytes, changed_at, expires_at, pending`

// lifetimeCols reads a row's lifetime (driver.Entry.Lifetime) out of its
// metadata in the query that lists it: the values of driver.ExpiresKey and
// driver.PinnedKey, empty when absent.
const lifetimeCols = `COALESCE(metadata->>'` + driver.ExpiresKey + `', ''), COALESCE(metadata->>'` + driver.PinnedKey + `', '')`

func newStatements(table string) statements {
	t, r, f, a := quote(table), quote(table+"_receipts"), quote(table+"_mutate"), quote(table+"_append")
	h := quote(table + "_history")
	script := strings.NewReplacer(
		"{TI}", quote(table+"_tomb_exp"), "{RI}", quote(table+"_rcpt_exp"), "{HI}", quote(table+"_hist_exp"),
		"{TN}", table, "{T}", t, "{R}", r, "{H}", h, "{F}", f, "{A}", a,
		"{ARGS}", mutateArgs, "{AARGS}", appendArgs, "{TYPES}", mutateTypes, "{OLDF}", oldMutateTypes, "{OLDA5}", oldAppendTypes5,
		"{OLDA}", oldAppendTypes, "{EXPIRES}", driver.ExpiresKey, "{PINNED}", driver.PinnedKey,
		"{VERSION}", schemaVersion,
	).Replace(ddl)
	// The lock key is a number derived from the table name; a collision
	// only serialises two schema creations.
	lockKey := fnv.New64a()
	lockKey.Write([]byte("agentmem:" + table))
	lock := fmt.Sprintf("SELECT pg_advisory_xact_lock(%d);", int64(lockKey.Sum64()))
	// Scope reads: the range [prefix, end) on the primary key, files
	// directly in the scope only, content cut to $2 = MaxChars+1 characters
	// (the extra one tells truncation without reading the length), or
	// content_bytes cut to $4 = 4×$2 bytes, which hold at least $2
	// characters; then the file's lifetime.
	scope := `SELECT path, CASE WHEN content_bytes IS NULL THEN left(content, $2::int) END,
		substring(content_bytes FROM 1 FOR $4::int), version, ` + lifetimeCols + ` FROM ` + t + `
		WHERE path >= $1::text %s AND NOT tombstone AND strpos(substr(path, char_length($1::text) + 1), '/') = 0
		ORDER BY path LIMIT $3::int`
	list := `SELECT path, tombstone, ` + lifetimeCols + ` FROM ` + t + ` WHERE path >= $1::text AND path > $2::text %s ORDER BY path LIMIT $3::int`
	// The snapshot: the file $4 (first column true) and a listing page
	// (false) in one statement. The file's row carries its whole metadata,
	// a listing row its lifetime (before the file columns, so scanFile
	// reads the rest).
	snapshot := `SELECT true, '', '', ` + fileCols + ` FROM ` + t + ` WHERE path = $4::text
		UNION ALL (SELECT false, ` + lifetimeCols + `, path, '', NULL, '', '', NULL, tombstone, NULL FROM ` + t + `
			WHERE path >= $1::text AND path > $2::text %s ORDER BY path LIMIT $3::int)`
	// History: a page is a range of the primary key, [prefix, end) after
	// $2; a delete batch takes the first $2 keys of the range whose path
	// starts with the prefix (a key is its path, a space and more, so when
	// the prefix holds a space the range may hold the entries of a shorter
	// path) and reports how many it selected, so that a row removed
	// concurrently does not end the loop early.
	listHistory := `SELECT ` + historyCols + ` FROM ` + h + ` WHERE key >= $1::text AND key > $2::text %s ORDER BY key LIMIT $3::int`
	deleteHistory := `WITH s AS (SELECT key FROM ` + h + ` WHERE key >= $1::text %s
			AND left(path, char_length($1::text)) = $1::text ORDER BY key LIMIT $2::int),
		d AS (DELETE FROM ` + h + ` WHERE key IN (SELECT key FROM s) RETURNING 1)
		SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM d)`
	return statements{
		table:           table,
		schemaCheck:     `SELECT COALESCE(obj_description(to_regprocedure($1::text), 'pg_proc'), '')`,
		tableExists:     `SELECT to_regclass($1::text) IS NOT NULL`,
		mutateSignature: f + "(" + mutateTypes + ")",
		schema:          lock + script,
		getFile:         `SELECT ` + fileCols + ` FROM ` + t + ` WHERE path = $1::text`,
		listFiles:       fmt.Sprintf(list, `AND path < $4::text`),
		listAll:         fmt.Sprintf(list, ``),
		createFile: `INSERT INTO ` + t + ` (path, content, version, operation_id, metadata, tombstone, expires_at, content_bytes)
			VALUES ($1::text, $2::text, $3::text, NULLIF($4::text, ''), $5::text::jsonb, $6::boolean, $7::timestamptz, $8::bytea)
			ON CONFLICT (path) DO NOTHING`,
		replaceFile: `UPDATE ` + t + ` SET content = $2::text, version = $3::text, operation_id = NULLIF($4::text, ''),
			metadata = $5::text::jsonb, tombstone = $6::boolean, expires_at = $7::timestamptz, content_bytes = $9::bytea
			WHERE path = $1::text AND version = $8::text`,
		deleteFile: `DELETE FROM ` + t + ` WHERE path = $1::text AND version = $2::text`,
		getReceipt: `SELECT ` + receiptCols + ` FROM ` + r + ` WHERE id = $1::text`,
		reserveReceipt: `INSERT INTO ` + r + ` (` + receiptCols + `)
			VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::boolean, false, $8::timestamptz, $9::timestamptz)
			ON CONFLICT (id) DO NOTHING`,
		completeReceipt: `UPDATE ` + r + ` SET fingerprint = $3::text, kind = $4::text, path = $5::text, expected = $6::text,
			existed = $7::boolean, completed = true, created_at = $8::timestamptz, expires_at = $9::timestamptz
			WHERE id = $1::text AND version = $2::text AND NOT completed`,
		completedReceipt: `SELECT EXISTS (SELECT FROM ` + r + ` WHERE id = $1::text AND version = $2::text AND completed)`,
		dropReceipt:      `DELETE FROM ` + r + ` WHERE id = $1::text AND version = $2::text AND NOT completed`,
		receiptExists:    `SELECT EXISTS (SELECT FROM ` + r + ` WHERE id = $1::text)`,
		mutate: `SELECT ` + receiptCols + ` FROM ` + f + `($1::text, $2::text, $3::text, $4::bytea, $5::text::jsonb, $6::text, $7::text,
			$8::text, $9::text, $10::text, $11::text, $12::text, $13::text, $14::boolean, $15::boolean, $16::timestamptz, $17::timestamptz,
			$18::text, $19::text, $20::text, $21::text, $22::text, $23::text, $24::text::jsonb, $25::text, $26::bytea,
			$27::timestamptz, $28::timestamptz)`,
		getFiles:  `SELECT ` + fileCols + ` FROM ` + t + ` WHERE path = ANY($1::text[])`,
		readScope: fmt.Sprintf(scope, `AND path < $5::text`),
		readAll:   fmt.Sprintf(scope, ``),
		// Prune batches: up to $2 expired rows found through the
		// expires_at indexes; rows a writer holds are skipped (the next
		// prune takes them).
		pruneReceiptBatch: `WITH d AS (DELETE FROM ` + r + ` WHERE id IN (SELECT id FROM ` + r + `
			WHERE expires_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED) RETURNING 1) SELECT count(*) FROM d`,
		pruneTombBatch: `WITH d AS (DELETE FROM ` + t + ` WHERE path IN (SELECT path FROM ` + t + `
			WHERE tombstone AND expires_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
			AND tombstone AND expires_at < $1::timestamptz RETURNING 1) SELECT count(*) FROM d`,
		snapshot:    fmt.Sprintf(snapshot, `AND path < $5::text`),
		snapshotAll: fmt.Sprintf(snapshot, ``),
		append: `SELECT ` + receiptCols + ` FROM ` + a + `($1::text, $2::text, $3::bytea, $4::text, $5::int, $6::text::jsonb,
			$7::text, $8::text, $9::text, $10::text, $11::timestamptz, $12::timestamptz,
			$13::text, $14::text, $15::text, $16::text, $17::text, $18::timestamptz, $19::timestamptz)`,
		putHistory: `INSERT INTO ` + h + ` (key, path, version, previous, kind, operation_id, metadata, content, content_bytes,
				changed_at, expires_at, pending)
			VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, NULLIF($6::text, ''), $7::text::jsonb, $8::text, $9::bytea,
				$10::timestamptz, $11::timestamptz, $12::boolean)
			ON CONFLICT (key) DO NOTHING`,
		getHistory:         `SELECT ` + historyCols + ` FROM ` + h + ` WHERE key = $1::text AND version = $2::text`,
		completeHistory:    `UPDATE ` + h + ` SET pending = false WHERE key = $1::text AND version = $2::text AND pending`,
		dropHistory:        `DELETE FROM ` + h + ` WHERE key = $1::text AND version = $2::text AND pending`,
		historyExists:      `SELECT EXISTS (SELECT FROM ` + h + ` WHERE key = $1::text AND version = $2::text)`,
		listHistory:        fmt.Sprintf(listHistory, `AND key < $4::text`),
		listHistoryAll:     fmt.Sprintf(listHistory, ``),
		deleteHistoryBatch: fmt.Sprintf(deleteHistory, `AND key < $3::text`),
		deleteHistoryAll:   fmt.Sprintf(deleteHistory, ``),
		pruneHistoryBatch: `WITH d AS (DELETE FROM ` + h + ` WHERE key IN (SELECT key FROM ` + h + `
			WHERE expires_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
			AND expires_at < $1::timestamptz RETURNING 1) SELECT count(*) FROM d`,
	}
}

// schemaOnce records that one process created (or found) the schema of one
// table in one database.
type schemaOnce struct {
	mu   sync.Mutex
	done bool
}

var schemas sync.Map // schema key → *schemaOnce

// ensureSchema makes sure the schema of table exists, once per process for
// each database, role, search_path and table. A schema dropped while the process runs is
// noticed by the mutation (recreateSchema).
func ensureSchema(ctx context.Context, pool *pgxpool.Pool, table string) error {
	key := schemaKey(pool, table)
	v, _ := schemas.LoadOrStore(key, &schemaOnce{})
	once := v.(*schemaOnce)
	once.mu.Lock()
	defer once.mu.Unlock()
	if once.done {
		return nil
	}
	if err := createSchema(ctx, pool, newStatements(table), false); err != nil {
		return err
	}
	once.done = true
	return nil
}

// schemaKey names the tables a pool resolves table to: the search_path
// (and the options, which can set it) pick the schema they are created
// in, so pools that differ there need a schema of their own.
func schemaKey(pool *pgxpool.Pool, table string) string {
	c := pool.Config().ConnConfig
	return fmt.Sprintf("%s@%s:%d/%s/%s?search_path=%q&options=%q", c.User, c.Host, c.Port, c.Database, table,
		c.RuntimeParams["search_path"], c.RuntimeParams["options"])
}

// recreateSchema forgets that the schema of table exists and makes sure of
// it again.
func recreateSchema(ctx context.Context, pool *pgxpool.Pool, table string) error {
	schemas.Delete(schemaKey(pool, table))
	// Run the DDL whatever the function's version says: a table may be gone
	// while the function survived.
	if err := createSchema(ctx, pool, newStatements(table), true); err != nil {
		return err
	}
	return ensureSchema(ctx, pool, table)
}

// checkTable reports, for Options.NoCreate, a files table that does not
// exist where the pool's search_path looks (wrapping
// driver.ErrStoreNotFound).
func checkTable(ctx context.Context, pool *pgxpool.Pool, s statements) error {
	var found bool
	if err := pool.QueryRow(ctx, s.tableExists, quote(s.table)).Scan(&found); err != nil {
		return fmt.Errorf("postgres: checking the table %s: %w", s.table, fail(ctx, err))
	}
	if !found {
		return fmt.Errorf("postgres: the table %q does not exist (create it first, or open it without create=false, which creates it): %w", s.table, driver.ErrStoreNotFound)
	}
	return nil
}

// createSchema creates the schema unless (without force) the function
// already carries the current schema version. The DDL runs as one multi-statement simple query,
// which PostgreSQL executes as one transaction, after taking the table's
// advisory lock: processes starting together queue on the lock and the
// IF NOT EXISTS clauses make every later run a no-op.
func createSchema(ctx context.Context, pool *pgxpool.Pool, s statements, force bool) error {
	if !force {
		var found string
		if err := pool.QueryRow(ctx, s.schemaCheck, s.mutateSignature).Scan(&found); err != nil {
			return fmt.Errorf("postgres: checking the schema of %s: %w", s.table, err)
		}
		if found == schemaVersion {
			return nil
		}
	}
	if _, err := pool.Exec(ctx, s.schema); err != nil {
		return fmt.Errorf("postgres: creating the schema of %s: %w", s.table, err)
	}
	return nil
}
