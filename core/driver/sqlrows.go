package driver

import (
	"encoding/json"
	"slices"
	"strings"
)

// This file holds helpers for drivers over SQL databases (database/sql,
// pgx): code the SQLite and PostgreSQL drivers would otherwise each carry.

// SQLRows is the part of a SQL result set that [CollectSnapshot] walks:
// *sql.Rows of database/sql and pgx.Rows both have it.
type SQLRows interface {
	Next() bool
	Err() error
}

// CollectSnapshot reads the result of a statement that answers
// [SnapshotReader.ReadSnapshot] in one result set: the file's row, if the
// file exists, and the rows of the listing page. scan reads the current
// row into a File and sets *isFile when the row is the file's (then the
// File is the result's file); a listing entry's row keeps only its Path
// and Tombstone, with the *lifetime scan sets from the same row (the
// statement reads [ExpiresKey] and [PinnedKey] out of the metadata
// column: [Entry].Lifetime). The entries come back sorted by path, whatever
// order the database returned them in (a UNION ALL of two ordered arms
// promises none). The first error of scan or of rows.Err is returned as
// is; rows are not closed.
func CollectSnapshot(rows SQLRows, scan func(isFile *bool, lifetime *Lifetime) (*File, error)) (*File, []Entry, error) {
	var file *File
	var out []Entry
	for rows.Next() {
		var isFile bool
		var l Lifetime
		f, err := scan(&isFile, &l)
		if err != nil {
			return nil, nil, err
		}
		if isFile {
			file = f
		} else {
			out = append(out, Entry{Path: f.Path, Tombstone: f.Tombstone, Lifetime: l})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return file, out, nil
}

// MetadataJSON returns the value to bind for a metadata column that holds
// JSON text: nil (SQL NULL) for no metadata, otherwise the JSON object of m
// as a string (PostgreSQL casts it to jsonb; SQLite's json functions read
// it as it is).
func MetadataJSON(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}
