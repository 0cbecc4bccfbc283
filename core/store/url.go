// Store URLs: the scheme registry, Open and OpenDriver.

package store

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// URLOpener opens a driver from a store URL whose scheme it was registered
// for. u is parsed and its scheme lower-cased; the opener checks the rest
// (host, path, query) and reports a bad one with an error wrapping
// [ErrInvalidURL]. The driver it returns owns whatever the opener created
// (pools, SDK clients): its Close releases them.
type URLOpener func(ctx context.Context, u *url.URL) (driver.Driver, error)

// schemes are the registered store URL schemes. known maps each scheme
// agentmem's own modules register to the package whose import registers
// it, so that an unknown-scheme error can say which import is missing.
var schemes = registry[URLOpener]{fn: "Register", what: "scheme", known: map[string]string{
	"mem":        "github.com/agentmem/agentmem/core/memstore",
	"file":       "github.com/agentmem/agentmem/core/filestore",
	"sqlite":     "github.com/agentmem/agentmem/sqlite",
	"postgres":   "github.com/agentmem/agentmem/postgres",
	"postgresql": "github.com/agentmem/agentmem/postgres",
	"dynamodb":   "github.com/agentmem/agentmem/dynamodb",
	"firestore":  "github.com/agentmem/agentmem/firestore",
	"cosmosdb":   "github.com/agentmem/agentmem/cosmosdb",
}}

// Register makes open the opener of store URLs with scheme (such as
// "sqlite"; compared case-insensitively). Backends call it from an init
// function, so that a blank import of the backend's package adds its
// schemes, as database/sql drivers do. It is safe for concurrent use.
// Like sql.Register it panics when scheme is empty or not a valid URL
// scheme, when open is nil, or when scheme is registered already: each is
// a programming error found the first time the program starts.
func Register(scheme string, open URLOpener) { schemes.add(scheme, open, open == nil) }

// Schemes returns the registered schemes, sorted.
func Schemes() []string { return schemes.names() }

// validScheme reports whether s is a URL scheme: a letter, then letters,
// digits, "+", "-" or ".".
func validScheme(s string) bool {
	for i, r := range s {
		switch {
		case 'a' <= r && r <= 'z':
		case i > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// OpenDriver opens the driver that rawURL names, through the opener
// registered for its scheme (see [Open] for the schemes). Most programs
// call Open; OpenDriver serves code that needs the driver itself, such as
// a conformance harness or a driver wrapper. The caller owns the driver.
//
// It fails with [ErrInvalidURL] for a URL that does not parse or that the
// backend refuses, and with [ErrUnknownScheme] (which also wraps
// ErrInvalidURL) when no package registered the scheme. No error repeats
// the URL's password or query.
func OpenDriver(ctx context.Context, rawURL string) (driver.Driver, error) {
	if ctx == nil {
		return nil, fmt.Errorf("agentmem: pass a context to OpenDriver, not nil: %w", ErrNilArgument)
	}
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	open, ok := schemes.get(u.Scheme)
	if !ok {
		return nil, unknownScheme(u.Scheme)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := open(ctx, u)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("agentmem: the opener of scheme %q returned no driver", u.Scheme)
	}
	return d, nil
}

// Open returns a store over the backend that rawURL names. The scheme
// picks the backend; the package that implements it registers it when
// imported (a blank import is enough):
//
//	mem://                                      core/memstore: in memory, empty
//	file:///abs/dir  file:rel/dir               core/filestore: Markdown files in a directory
//	sqlite:///abs/memory.db  sqlite:memory.db   sqlite: one database file (?table=, ?busy_timeout=)
//	postgres://user@host/db  postgresql://…     postgres: a libpq URL for pgx (?table=)
//	dynamodb://TABLE                            dynamodb: (?region=, ?endpoint=, ?partition_depth=, ?create_table=)
//	firestore://PROJECT/COLLECTION              firestore: (?database=, ?emulator_host=)
//	cosmosdb://HOST/DATABASE/CONTAINER          cosmosdb: key from the environment (?insecure=1)
//
// Each backend's package documentation lists its parameters; an unknown
// parameter is an error. Three parameters belong to the store and work on
// every backend: history (see [HistoryParam]), as in
// "sqlite:memory.db?history=30d", recency (see [RecencyParam]), as in
// "sqlite:memory.db?recency=7d", and embedder (see [EmbedderParam]), as
// in "sqlite:memory.db?embedder=wordvec", which turns hybrid search on
// (its package must be imported, as a backend's is). Credentials come from each SDK's usual chain or
// from the environment, never from a URL's log line: no error repeats a
// password or a query. opts configure the store as for [New]. The store
// owns the driver: Close closes it and whatever the opener created.
//
// It fails with [ErrInvalidURL] for a URL that does not parse or that the
// backend refuses, with [ErrUnknownScheme] when no imported package
// registered the scheme or the embedder (the error names the import that
// adds it), with the embedder's error when it cannot be made (a missing
// API key), or with the backend's error when it cannot be reached.
func Open(ctx context.Context, rawURL string, opts *Options) (*Store, error) {
	if ctx == nil {
		return nil, fmt.Errorf("agentmem: pass a context to Open, not nil: %w", ErrNilArgument)
	}
	rawURL, opts, err := storeParams(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	d, err := OpenDriver(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return New(d, opts), nil
}

// HistoryParam is the store URL parameter, understood by [Open] on every
// backend, that turns history on (Options.History): "on" (the default
// retention), a Go duration ("720h") or a number of days ("30d").
// Options.History, when set, wins.
const HistoryParam = driver.HistoryParam

// storeParams takes the store's own parameters (HistoryParam,
// EmbedderParam) off rawURL and returns the URL for the backend and the
// options they make. It opens the embedder the URL names.
func storeParams(ctx context.Context, rawURL string, opts *Options) (string, *Options, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return "", nil, err
	}
	q, qerr := url.ParseQuery(u.RawQuery) // what parses, even on an error
	hvals, hasHistory := q[HistoryParam]
	_, hasEmbedder := q[EmbedderParam]
	rvals, hasRecency := q[RecencyParam]
	if !hasHistory && !hasEmbedder && !hasRecency {
		return rawURL, opts, nil
	}
	// The query is re-encoded below: a part that does not parse would be
	// dropped, and the backend's check of it skipped.
	if qerr != nil {
		return "", nil, driver.URLError(u, "the query does not parse")
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if hasHistory {
		if len(hvals) > 1 {
			return "", nil, driver.URLError(u, "parameter %q is given %d times", HistoryParam, len(hvals))
		}
		retention, err := parseRetention(hvals[0])
		if err != nil {
			return "", nil, err
		}
		q.Del(HistoryParam)
		if o.History == nil {
			o.History = &HistoryOptions{Retention: retention}
		}
	}
	if hasRecency {
		if len(rvals) > 1 {
			return "", nil, driver.URLError(u, "parameter %q is given %d times", RecencyParam, len(rvals))
		}
		h, err := parseDays(RecencyParam, rvals[0], "168h", "7d")
		if err != nil {
			return "", nil, err
		}
		q.Del(RecencyParam)
		if o.SearchRecencyHalfLife == 0 {
			o.SearchRecencyHalfLife = h
		}
	}
	if hasEmbedder {
		_, e, err := embedderParam(ctx, u, q)
		if err != nil {
			return "", nil, err
		}
		o.Embedder = e // the URL's choice, "none" included, replaces the program's default
	}
	u.RawQuery = q.Encode()
	return u.String(), &o, nil
}

// RecencyParam is the store URL parameter, understood by [Open] on every
// backend, that weighs recent files more in search
// (Options.SearchRecencyHalfLife): a half-life as a Go duration ("168h")
// or a number of days ("7d"). Options.SearchRecencyHalfLife, when set,
// wins.
const RecencyParam = "recency"

// parseRetention parses a HistoryParam value.
func parseRetention(v string) (time.Duration, error) {
	switch v {
	case "on", "1", "true":
		return DefaultHistoryRetention, nil
	}
	return parseDays(HistoryParam, v, "720h", "30d")
}

// parseDays parses the value v of the URL parameter name: a positive Go
// duration or a number of days (the examples are for the error).
func parseDays(name, v, exDuration, exDays string) (time.Duration, error) {
	bad := fmt.Errorf("%w: %s=%q: write a duration such as %s, or days such as %s", ErrInvalidURL, name, v, exDuration, exDays)
	if name == HistoryParam {
		bad = fmt.Errorf("%w: %s=%q: write %s=on, a duration such as %s, or days such as %s", ErrInvalidURL, name, v, name, exDuration, exDays)
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// ParseURL parses a store URL and lower-cases its scheme. It fails with
// [ErrInvalidURL] when rawURL does not parse or has no scheme; the error
// never repeats the URL.
func ParseURL(rawURL string) (*url.URL, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("%w: the URL is empty: name a store such as mem://, file:notes or sqlite:memory.db", ErrInvalidURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error repeats the URL, password included.
		scheme, _, _ := strings.Cut(rawURL, ":")
		if !validScheme(strings.ToLower(scheme)) {
			scheme = "?"
		}
		return nil, fmt.Errorf("%w: a %s: URL that does not parse: percent-encode reserved characters (@ : / ? # %%) in a password or a name", ErrInvalidURL, scheme)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("%w: %q has no scheme: write mem://, file:DIR, sqlite:FILE.db, postgres://… (registered: %s)", ErrInvalidURL, Redact(u), strings.Join(Schemes(), ", "))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}

// unknownScheme reports a scheme that no imported package registered.
func unknownScheme(scheme string) error {
	pkg, ok, registered := schemes.missing(scheme)
	msg := fmt.Sprintf("agentmem: no store is registered for scheme %q (registered: %s)", scheme, registered)
	if ok {
		msg = fmt.Sprintf("agentmem: no store is registered for scheme %q: add import _ %q (registered: %s)", scheme, pkg, registered)
	}
	return &detailed{msg: msg, errs: []error{ErrUnknownScheme, ErrInvalidURL}}
}

// Redact returns u for an error message or a log line: without its query,
// fragment and password (user names stay). It is [driver.Redact].
func Redact(u *url.URL) string { return driver.Redact(u) }
