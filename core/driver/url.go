package driver

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// HistoryParam and EmbedderParam are the store URL parameters every store
// takes (history retention and the embedder); the store takes them off the
// URL before an opener sees it, and [CheckQuery] knows them.
const (
	HistoryParam  = "history"
	EmbedderParam = "embedder"
)

// CreateParam is the store URL parameter every backend's opener takes:
// create=false opens only a store that exists (the backend's
// Options.NoCreate: a missing database file, directory, table or
// container is an error wrapping [ErrStoreNotFound] and nothing is
// created); create=true, the default, creates what is missing. Backends
// that create nothing (memory, Firestore) accept and check it. Openers
// read it with [NoCreate]; [CheckQuery] knows it.
const CreateParam = "create"

// NoCreate reports whether u's query says create=false. A value that is
// not a boolean (true, false, 1, 0) fails with [ErrInvalidURL].
func NoCreate(u *url.URL) (bool, error) {
	v := u.Query().Get(CreateParam)
	if v == "" {
		return false, nil
	}
	create, err := strconv.ParseBool(v)
	if err != nil {
		return false, URLError(u, "%s must be true or false", CreateParam)
	}
	return !create, nil
}

// ErrInvalidURL reports a store URL that does not parse, or that its
// backend refuses (a host where none belongs, an unknown or malformed
// parameter). The error says what to fix and never repeats a password or a
// query. store.ErrInvalidURL is the same value.
var ErrInvalidURL = errors.New("agentmem: invalid store URL")

// Redact returns u for an error message or a log line: without its query,
// fragment and password (user names stay).
func Redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.RawFragment, c.ForceQuery = "", "", "", false
	return c.Redacted()
}

// URLError returns an error wrapping [ErrInvalidURL] that names u (as
// [Redact] shows it) and says what to fix. Openers use it for a host,
// path or parameter they refuse.
func URLError(u *url.URL, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidURL, Redact(u), fmt.Sprintf(format, args...))
}

// CheckQuery fails with [ErrInvalidURL] when u's query has a parameter
// not in known, or one given twice, so that a misspelt option is never
// ignored silently; of several, it names the first in sorted order. It
// never repeats a parameter's value.
func CheckQuery(u *url.URL, known ...string) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return URLError(u, "the query does not parse")
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		v := q[k]
		if !slices.Contains(known, k) && k != CreateParam {
			// The store's own parameters are taken off before the
			// opener sees the URL, but they are known too.
			hint := "known: " + strings.Join(append(slices.Clone(known), CreateParam, HistoryParam, EmbedderParam), ", ")
			if len(known) == 0 {
				hint = "the only parameters known are " + CreateParam + ", " + HistoryParam + " and " + EmbedderParam + ", which every store takes"
			}
			return URLError(u, "unknown parameter %q (%s)", k, hint)
		}
		if len(v) > 1 {
			return URLError(u, "parameter %q is given %d times", k, len(v))
		}
	}
	return nil
}

// URLFilePath returns the local file-system path a file-like URL names:
// "scheme:///abs/path" (or "scheme://localhost/abs/path") is absolute,
// "scheme:rel/path" is relative to the working directory; percent-escapes
// are decoded. A host, or an empty path, fails with [ErrInvalidURL].
func URLFilePath(u *url.URL) (string, error) {
	var p string
	switch {
	case u.Opaque != "":
		var err error
		if p, err = url.PathUnescape(u.Opaque); err != nil {
			return "", URLError(u, "the path has a bad percent-escape")
		}
	case u.Host != "" && u.Host != "localhost":
		return "", URLError(u, "a %s URL names no host: write %s:///abs/path for an absolute path or %s:rel/path for a relative one", u.Scheme, u.Scheme, u.Scheme)
	default:
		p = u.Path
	}
	if p == "" {
		return "", URLError(u, "name a path: %s:///abs/path or %s:rel/path", u.Scheme, u.Scheme)
	}
	return p, nil
}
