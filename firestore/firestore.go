package firestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

// Options configures a Driver. nil, and the zero value of each field,
// mean the documented defaults.
type Options struct {
	// MaxAttempts bounds how often the client runs the Mutate transaction
	// when Firestore aborts it for contention. 0 (or less) means the
	// default, firestore.DefaultTransactionMaxAttempts (5).
	MaxAttempts int
	// CacheSize is how many entries the driver's cache holds: per path,
	// the update time of the version last read or written, which lets
	// Mutate write in one Commit (see Driver.Mutate). 0 means the default
	// size (4,096); a negative value turns the cache off, so that every
	// Mutate runs the transaction.
	CacheSize int
}

// Driver stores agentmem files, operation receipts and file history
// entries (driver.Historian) in one Firestore collection. It is safe for
// concurrent use. The zero value is not usable; call New.
type Driver struct {
	client       *firestore.Client
	coll         *firestore.CollectionRef
	maxAttempts  int
	seen         *stamps      // path → update time of the version last seen; nil: off
	closer       func() error // closes a client the driver created (store URLs)
	historyBatch int          // entries DeleteHistory removes per Commit
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Mutator     = (*Driver)(nil)
	_ driver.BatchGetter = (*Driver)(nil)
	_ driver.ScopeReader = (*Driver)(nil)
	_ driver.Historian   = (*Driver)(nil)
	_ driver.Namer       = (*Driver)(nil)
)

// Name implements driver.Namer: "firestore", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "firestore" }

// New returns a driver over the collection named collection (an ID such as
// "agentmem", or a path to a subcollection such as "apps/a1/memory") of the
// user's client. It does no I/O: no index or collection has to be created.
// The driver does not own client; Close leaves it open. A nil ctx or
// client, or an empty collection, is an error wrapping
// driver.ErrNilArgument; a malformed collection is an error too.
func New(ctx context.Context, client *firestore.Client, collection string, opts *Options) (*Driver, error) {
	switch {
	case ctx == nil:
		return nil, fmt.Errorf("firestore: pass a context to New, not nil: %w", driver.ErrNilArgument)
	case client == nil:
		return nil, fmt.Errorf("firestore: pass a Firestore client to New, not nil: %w", driver.ErrNilArgument)
	case collection == "":
		return nil, fmt.Errorf("firestore: pass a collection name to New, not \"\": %w", driver.ErrNilArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	coll := client.Collection(collection)
	if coll == nil || strings.HasPrefix(coll.ID, "__") && strings.HasSuffix(coll.ID, "__") {
		return nil, fmt.Errorf("firestore: pass a collection ID or a path to a subcollection (\"apps/a1/memory\"), not %q (IDs of the form __ID__ are reserved)", collection)
	}
	d := &Driver{client: client, coll: coll, maxAttempts: firestore.DefaultTransactionMaxAttempts, historyBatch: defaultHistoryBatch}
	size := defaultStamps
	if opts != nil {
		if opts.MaxAttempts > 0 {
			d.maxAttempts = opts.MaxAttempts
		}
		if opts.CacheSize != 0 {
			size = opts.CacheSize
		}
	}
	if size > 0 {
		d.seen = newStamps(size)
	}
	return d, nil
}

// Close implements driver.Driver. It does not close a client passed to
// New, which the caller owns; it closes the client that a store URL's
// opener created.
func (d *Driver) Close() error {
	if d.closer != nil {
		return d.closer()
	}
	return nil
}

// Document IDs. A file's ID is reversible: paths are made of
// [A-Za-z0-9_.-] and "/", so "~" is free to stand for "/", and the prefix
// keeps IDs clear of the reserved "." / ".." / "__…__" forms.
const (
	filePrefix    = "f~"
	receiptPrefix = "r~"
	// maxIDBytes is Firestore's document ID limit; it also bounds the part
	// of an indexed string that queries compare (1,500 bytes).
	maxIDBytes   = 1500
	maxPathBytes = maxIDBytes - len(filePrefix)
	// maxDocBytes is Firestore's document size limit.
	maxDocBytes = 1 << 20
)

// FileID returns the document ID of the file row at path.
func FileID(path string) string { return filePrefix + strings.ReplaceAll(path, "/", "~") }

// PathOfID returns the path whose file row has document ID id, and false
// when id is not a file row's ID.
func PathOfID(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, filePrefix)
	if !ok || rest == "" {
		return "", false
	}
	return strings.ReplaceAll(rest, "~", "/"), true
}

// ReceiptID returns the document ID of the receipt of operation id.
func ReceiptID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return receiptPrefix + hex.EncodeToString(sum[:])
}

func (d *Driver) fileRef(path string) *firestore.DocumentRef { return d.coll.Doc(FileID(path)) }

func (d *Driver) receiptRef(id string) *firestore.DocumentRef { return d.coll.Doc(ReceiptID(id)) }

// storable reports whether a file row at path can exist at all.
func storable(path string) bool { return len(path) <= maxPathBytes }

// Field names. Files have path; receipts never do (they name their path
// target), so range queries on path see files only.
const (
	fPath        = "path"
	fContent     = "content"
	fVersion     = "version"
	fOperation   = "operationId"
	fMetadata    = "metadata"
	fTombstone   = "tombstone"
	fExpiresAt   = "expiresAt" // the TTL field of tombstones and receipts
	fID          = "id"
	fFingerprint = "fingerprint"
	fKind        = "kind"
	fTarget      = "target"
	fExpected    = "expected"
	fExisted     = "existed"
	fCompleted   = "completed"
	fCreatedAt   = "createdAt"
	fAttempt     = "attempt" // Mutate's token for recognising its own commit
	fReceipt     = "receipt" // a completed receipt written by Mutate, packed as JSON
)

// fileFields returns every field of a file row, with firestore.Delete for
// the optional ones f lacks, so that an Update replaces the whole row.
func (d *Driver) fileFields(f driver.File) ([]firestore.Update, error) {
	var meta any = firestore.Delete
	if f.Metadata != nil {
		b, err := json.Marshal(f.Metadata)
		if err != nil {
			return nil, err
		}
		meta = string(b)
	}
	var tomb, expires any = firestore.Delete, firestore.Delete
	if f.Tombstone {
		tomb = true
	}
	if !f.ExpiresAt.IsZero() {
		expires = f.ExpiresAt
	}
	op := any(firestore.Delete)
	if f.OperationID != "" {
		op = f.OperationID
	}
	u := []firestore.Update{
		{Path: fPath, Value: f.Path},
		{Path: fContent, Value: f.Content},
		{Path: fVersion, Value: f.Version},
		{Path: fOperation, Value: op},
		{Path: fMetadata, Value: meta},
		{Path: fTombstone, Value: tomb},
		{Path: fExpiresAt, Value: expires},
	}
	if size := docSize(d.fileRef(f.Path).Path, u); !storable(f.Path) || size > maxDocBytes {
		return nil, fmt.Errorf("firestore: row for %q (%d bytes, path %d bytes): %w", f.Path, size, len(f.Path), driver.ErrTooLarge)
	}
	return u, nil
}

// fileData is the document of a new file row.
func (d *Driver) fileData(f driver.File) (map[string]any, error) {
	u, err := d.fileFields(f)
	if err != nil {
		return nil, err
	}
	return rowData(u), nil
}

// rowData is the document that fileFields' updates describe.
func rowData(u []firestore.Update) map[string]any {
	m := make(map[string]any, len(u))
	for _, x := range u {
		if x.Value != firestore.Delete {
			m[x.Path] = x.Value
		}
	}
	return m
}

// docSize is Firestore's documented storage size of the document named
// name ("projects/…/documents/coll/id") with the given fields: each
// collection and document ID + 1, + 16 for the name, each field name + 1
// and its value, + 32.
func docSize(name string, u []firestore.Update) int {
	_, rel, _ := strings.Cut(name, "/documents/")
	n := len(rel) + 1 + 16 + 32 // the "/" separators stand in for the +1 per ID
	for _, x := range u {
		if x.Value == firestore.Delete {
			continue
		}
		n += len(x.Path) + 1
		switch v := x.Value.(type) {
		case string:
			n += len(v) + 1
		case bool:
			n++
		default:
			n += 8 // timestamps
		}
	}
	return n
}

func getString(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func getBool(m map[string]any, k string) bool {
	b, _ := m[k].(bool)
	return b
}

func getTime(m map[string]any, k string) time.Time {
	t, _ := m[k].(time.Time)
	return t
}

// decodeFile turns a file row's snapshot into a driver.File.
func decodeFile(s *firestore.DocumentSnapshot) (*driver.File, error) {
	m := s.Data()
	f := &driver.File{
		Path:        getString(m, fPath),
		Content:     getString(m, fContent),
		Version:     getString(m, fVersion),
		OperationID: getString(m, fOperation),
		Tombstone:   getBool(m, fTombstone),
		ExpiresAt:   getTime(m, fExpiresAt),
	}
	if js := getString(m, fMetadata); js != "" {
		if err := json.Unmarshal([]byte(js), &f.Metadata); err != nil {
			return nil, fmt.Errorf("firestore: metadata of %s: %w", s.Ref.ID, err)
		}
	}
	if f.Path == "" || f.Version == "" {
		return nil, fmt.Errorf("firestore: document %s is not a file row", s.Ref.ID)
	}
	return f, nil
}

// lifetime reads the store-owned lifetime keys (driver.ExpiresKey,
// driver.PinnedKey) from the metadata field of m, the data of file row s;
// the keys travel inside the metadata JSON, so a listing selects that
// field.
func lifetime(s *firestore.DocumentSnapshot, m map[string]any) (driver.Lifetime, error) {
	l, err := driver.LifetimeOfJSON(getString(m, fMetadata)) // without decoding the whole text
	if err != nil {
		return driver.Lifetime{}, fmt.Errorf("firestore: metadata of %s: %w", s.Ref.ID, err)
	}
	return l, nil
}

// receiptData is the document of a receipt on the primitive path.
func receiptData(r driver.Receipt) map[string]any {
	return map[string]any{
		fID:          r.ID,
		fFingerprint: r.Fingerprint,
		fKind:        string(r.Kind),
		fTarget:      r.Path,
		fExpected:    r.Expected,
		fVersion:     r.Version,
		fExisted:     r.Existed,
		fCompleted:   r.Completed,
		fCreatedAt:   r.CreatedAt,
		fExpiresAt:   r.ExpiresAt,
	}
}

// packedReceipt is the JSON form of the receipt fields that Mutate writes
// in one field (fReceipt): a receipt it writes is complete and never
// updated, and one indexed string costs the Commit less than ten indexed
// fields (docs/benchmarks.md).
type packedReceipt struct {
	Fingerprint string    `json:"fp"`
	Kind        string    `json:"kind"`
	Target      string    `json:"path"`
	Expected    string    `json:"expected,omitempty"`
	Version     string    `json:"v,omitempty"`
	Existed     bool      `json:"existed,omitempty"`
	CreatedAt   time.Time `json:"created"`
}

// completedReceiptData is the document of a completed receipt that Mutate
// writes with its attempt token: id, the packed fields, expiresAt (the TTL
// field) and attempt.
func completedReceiptData(r driver.Receipt, attempt string) (map[string]any, error) {
	b, err := json.Marshal(packedReceipt{Fingerprint: r.Fingerprint, Kind: string(r.Kind), Target: r.Path,
		Expected: r.Expected, Version: r.Version, Existed: r.Existed, CreatedAt: r.CreatedAt})
	if err != nil {
		return nil, err
	}
	return map[string]any{fID: r.ID, fReceipt: string(b), fExpiresAt: r.ExpiresAt, fAttempt: attempt}, nil
}

// decodeReceipt turns a receipt's snapshot (either form) into a
// driver.Receipt and the attempt token stored with it.
func decodeReceipt(s *firestore.DocumentSnapshot, id string) (*driver.Receipt, string, error) {
	m := s.Data()
	r := &driver.Receipt{
		ID:          getString(m, fID),
		Fingerprint: getString(m, fFingerprint),
		Kind:        driver.Kind(getString(m, fKind)),
		Path:        getString(m, fTarget),
		Expected:    getString(m, fExpected),
		Version:     getString(m, fVersion),
		Existed:     getBool(m, fExisted),
		Completed:   getBool(m, fCompleted),
		CreatedAt:   getTime(m, fCreatedAt),
		ExpiresAt:   getTime(m, fExpiresAt),
	}
	if js := getString(m, fReceipt); js != "" {
		var p packedReceipt
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			return nil, "", fmt.Errorf("firestore: receipt document %s: %w", s.Ref.ID, err)
		}
		r.Fingerprint, r.Kind, r.Path, r.Expected, r.Version = p.Fingerprint, driver.Kind(p.Kind), p.Target, p.Expected, p.Version
		r.Existed, r.Completed, r.CreatedAt = p.Existed, true, p.CreatedAt
	}
	if r.ID != id {
		return nil, "", fmt.Errorf("firestore: receipt document %s holds operation %q, not %q", s.Ref.ID, r.ID, id)
	}
	return r, getString(m, fAttempt), nil
}

// create creates the document at ref. On a condition failure it asks mine
// whether the document there is this call's own write, re-sent by the
// client after a lost reply.
func create(ctx context.Context, call string, ref *firestore.DocumentRef, data map[string]any, mine func() (bool, error)) error {
	_, err := ref.Create(ctx, data)
	if err == nil {
		return nil
	}
	if !conditionFailed(err) {
		return fail(ctx, call, err)
	}
	ok, gerr := mine()
	switch {
	case gerr != nil:
		return fail(ctx, call, errors.Join(errUnknown, err, gerr))
	case ok:
		return nil
	}
	return precondition(call, err)
}

// verdict is what one read of a read → conditional-write round decides.
type verdict int

const (
	proceed verdict = iota // the condition holds: write
	done                   // the call has succeeded already
	refused                // the condition does not hold: ErrPrecondition
	unsure                 // the driver cannot tell whether its write landed
)

// maxRounds bounds the rounds of one call when the document keeps changing
// under it without the condition becoming false.
const maxRounds = 8

// guarded runs rounds of read → decide → write, where write is conditional
// on the update time of the snapshot read. A condition failure means the
// document changed after the read (or that the client re-sent a write that
// had landed), so the next round reads again with retried set, and decide
// looks for the call's own write.
func guarded(ctx context.Context, call string,
	decide func(retried bool) (verdict, *firestore.DocumentSnapshot, error),
	write func(*firestore.DocumentSnapshot) error,
) error {
	var last error
	for range maxRounds {
		v, snap, err := decide(last != nil)
		switch {
		case err != nil && last != nil:
			return fail(ctx, call, errors.Join(errUnknown, last, err))
		case err != nil:
			return err
		case v == done:
			return nil
		case v == refused:
			return precondition(call, last)
		case v == unsure:
			return fail(ctx, call, errors.Join(errUnknown, last))
		}
		if err = write(snap); err == nil {
			return nil
		}
		if !conditionFailed(err) {
			return fail(ctx, call, err)
		}
		last = err
	}
	return fail(ctx, call, errors.Join(errUnknown, last))
}

// updateAt replaces fields of the document s was read from, if it is
// unchanged since.
func updateAt(ctx context.Context, u []firestore.Update) func(*firestore.DocumentSnapshot) error {
	return func(s *firestore.DocumentSnapshot) error {
		_, err := s.Ref.Update(ctx, u, firestore.LastUpdateTime(s.UpdateTime))
		return err
	}
}

// deleteAt deletes the document s was read from, if it is unchanged since.
func deleteAt(ctx context.Context) func(*firestore.DocumentSnapshot) error {
	return func(s *firestore.DocumentSnapshot) error {
		_, err := s.Ref.Delete(ctx, firestore.LastUpdateTime(s.UpdateTime))
		return err
	}
}

// Collection returns the collection the driver stores its documents in.
func (d *Driver) Collection() *firestore.CollectionRef { return d.coll }

// defaultStamps bounds the driver's memory of file update times.
const defaultStamps = 4096

// stamp is what the driver last saw of a file row: its store version and
// the document's update time in that state.
type stamp struct {
	version string
	at      time.Time
}

// stamps remembers, per path, the update time of the last version the
// driver read or wrote, so that Mutate can write with an update-time
// precondition instead of reading inside a transaction. An entry is only
// a hint: a write conditioned on a stale one fails its precondition and
// writes nothing, and the transaction then decides. When full it forgets
// an arbitrary entry.
type stamps struct{ h *driver.Hints[string, stamp] }

func newStamps(n int) *stamps { return &stamps{driver.NewHints[string, stamp](n)} }

// at returns the update time of path at version, if known.
func (s *stamps) at(path, version string) (time.Time, bool) {
	st, ok := s.h.Get(path)
	if !ok || st.version != version || st.at.IsZero() {
		return time.Time{}, false
	}
	return st.at, true
}

func (s *stamps) put(path, version string, at time.Time) {
	if !at.IsZero() {
		s.h.Put(path, stamp{version: version, at: at})
	}
}

func (s *stamps) drop(path string) { s.h.Drop(path) }

// saw remembers the update time of a file row the driver read.
func (d *Driver) saw(f *driver.File, s *firestore.DocumentSnapshot) {
	if d.seen != nil && !f.Tombstone {
		d.seen.put(f.Path, f.Version, s.UpdateTime)
	}
}

// forget drops what the driver remembers of path.
func (d *Driver) forget(path string) {
	if d.seen != nil {
		d.seen.drop(path)
	}
}
