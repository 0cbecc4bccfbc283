package firestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

// Mutate implements driver.Mutator. Its happy path is ONE Commit RPC
// holding the file change, the completed receipt and the history entry
// (MutateParams.History, a Create) with preconditions:
// the receipt document must not exist (a create), and the file row must
// not exist (a create) or must still carry the update time the driver saw
// it at in the expected version (an update or delete with an update-time
// precondition). The driver knows that update time when it read the row
// (GetFile, GetFiles) or wrote it (an earlier Mutate) and remembers it per
// path (Options.CacheSize).
//
// Otherwise (see below) Mutate runs a read-write transaction, which
// decides: it reads the file row and the receipt together (locking both),
// then writes the file change, the completed receipt and the history
// entry, or nothing (a delete of an absent path writes its receipt
// alone). Three RPCs:
// BeginTransaction, BatchGetDocuments, Commit (a failed version check
// rolls back instead of committing).
//
// A failed or impossible Commit is first followed by a plain read of the
// file and the receipt (one BatchGetDocuments, see look), which either
// decides or refreshes the update time for another Commit; only a
// mutation without evidence of its own commit (a plain delete, a delete
// of a path that must be absent), a driver without the cache, or a row
// whose update time keeps changing under a constant version goes to the
// transaction. Writers racing for one document (appenders) therefore
// lose a precondition and retry, rather than wait on each other's locks
// and abort.
//
// The client re-sends a Commit after UNAVAILABLE, and runs the transaction
// function again after ABORTED; either may follow a commit that had
// landed. The transaction function therefore recognises its own earlier
// commit, from either path: a receipt holding this call's attempt token,
// or a file row holding p.Version. A plain delete (no receipt) leaves no
// such evidence, so once a commit has been attempted a mismatch is
// reported as an unknown outcome, never as ErrPrecondition.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	m, err := d.newMutation(p)
	if err != nil {
		return driver.MutateResult{}, err
	}
	for range maxLooks {
		if ok, err := d.commit(ctx, m); ok || err != nil {
			return m.res, err
		}
		if !m.optimistic() {
			break
		}
		if ok, err := m.look(ctx); ok || err != nil {
			return m.res, err
		}
	}
	err = d.client.RunTransaction(ctx, m.run, firestore.MaxAttempts(d.maxAttempts))
	switch {
	case err == nil:
		return m.res, nil
	case errors.Is(err, driver.ErrPrecondition), errors.Is(err, errUnknown), errors.Is(err, driver.ErrTooLarge):
		return driver.MutateResult{}, err
	}
	return driver.MutateResult{}, fail(ctx, "mutate", err)
}

// maxLooks bounds the rounds of Commit and look before Mutate lets a
// transaction decide (a row rewritten without a new version, such as a
// store's fence, changes its update time alone).
const maxLooks = 4

// optimistic reports whether m can be decided by a Commit with
// preconditions alone: its commit leaves evidence to recognise it by (a
// new version, or a receipt) and has a precondition for every state.
func (m *mutation) optimistic() bool {
	if m.d.seen == nil || m.file == nil {
		return false
	}
	return m.p.Kind == driver.KindWrite || m.p.Expected != "" && m.receipt != nil
}

// look reads the file row and the receipt together, without a
// transaction (one BatchGetDocuments, no locks), after the single Commit
// failed its preconditions or had no update time to go on. It decides
// when it can: this call's own commit landed (the client re-sent it), the
// receipt is known, or the row is not in the expected state
// (ErrPrecondition). Otherwise the row is as expected and its update time
// is remembered, so the next Commit is conditioned on what was read: two
// writers racing for one row then lose a precondition, never wait on a
// lock (transactions lock the rows they read, and under contention time
// out with ABORTED).
func (m *mutation) look(ctx context.Context) (bool, error) {
	refs := []*firestore.DocumentRef{m.file}
	if m.receipt != nil {
		refs = append(refs, m.receipt)
	}
	snaps, err := m.d.client.GetAll(ctx, refs)
	if err != nil {
		return false, fail(ctx, "mutate: read", err)
	}
	var receiptSnap *firestore.DocumentSnapshot
	if m.receipt != nil {
		receiptSnap = snaps[1]
	}
	decided, _, err := m.decide(snaps[0], receiptSnap)
	return decided, err // undecided: as expected, Commit again on what was read
}

// decide is the decision Mutate's reads lead to, on the paths that read
// (look, and the transaction's run): from the file row and the receipt
// read (nil snapshots for documents not read), it reports decided with
// m.res and the error set — the receipt answers, this call's own earlier
// commit landed, or the row is not as expected — or undecided with the
// current row (nil for none), on which the change applies.
func (m *mutation) decide(fileSnap, receiptSnap *firestore.DocumentSnapshot) (decided bool, cur *driver.File, err error) {
	m.res = driver.MutateResult{}
	if fileSnap != nil && fileSnap.Exists() {
		if cur, err = decodeFile(fileSnap); err != nil {
			return true, nil, err
		}
		m.d.saw(cur, fileSnap)
	}
	if receiptSnap != nil && receiptSnap.Exists() {
		r, attempt, err := decodeReceipt(receiptSnap, m.p.Receipt.ID)
		if err != nil {
			return true, nil, err
		}
		if attempt != m.attempt {
			m.res.Existing = r
		}
		return true, cur, nil
	}
	if m.p.Kind == driver.KindWrite && cur != nil && cur.Version == m.p.Version {
		return true, cur, nil // this call's earlier commit landed
	}
	if cur == nil && m.p.Expected != "" || cur != nil && cur.Version != m.p.Expected {
		if m.attempts > 0 && m.p.Kind == driver.KindDelete && m.receipt == nil {
			return true, cur, errUnknown
		}
		return true, cur, fmt.Errorf("firestore: mutate %q: %w", m.p.Path, driver.ErrPrecondition)
	}
	return false, cur, nil
}

// mutation is one Mutate call: its parameters, documents and the state
// that survives the client's re-runs of the transaction function.
type mutation struct {
	d          *Driver
	p          driver.MutateParams
	file       *firestore.DocumentRef // nil: the path cannot hold a row
	receipt    *firestore.DocumentRef // nil without a receipt
	receiptDoc map[string]any         // the completed receipt's document
	history    *firestore.DocumentRef // nil without a history entry
	historyDoc map[string]any         // the entry, created with the change
	data       map[string]any         // the new file row (writes)
	fields     []firestore.Update     // the same row as an Update that replaces every field
	attempt    string                 // token stored in the receipt
	attempts   int                    // commits attempted so far
	res        driver.MutateResult
}

func (d *Driver) newMutation(p driver.MutateParams) (*mutation, error) {
	m := &mutation{d: d, p: p}
	if p.Kind == driver.KindWrite {
		opID := ""
		if p.Receipt != nil {
			opID = p.Receipt.ID
		}
		var err error
		m.fields, err = d.fileFields(driver.File{Path: p.Path, Content: p.Content, Version: p.Version, OperationID: opID, Metadata: p.Metadata})
		if err != nil {
			return nil, err
		}
		m.data = rowData(m.fields)
	}
	if storable(p.Path) {
		m.file = d.fileRef(p.Path)
	}
	if p.History != nil && m.file != nil {
		u, err := d.historyFields(*p.History, "")
		if err != nil {
			return nil, err
		}
		m.history, m.historyDoc = d.historyRef(p.History.Key()), rowData(u)
	}
	if p.Receipt != nil {
		m.receipt = d.receiptRef(p.Receipt.ID)
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
		m.attempt = hex.EncodeToString(b[:])
		var err error
		if m.receiptDoc, err = completedReceiptData(*p.Receipt, m.attempt); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// run is the transaction function. It must stay correct when the client
// calls it again after an aborted (or re-sent) commit.
func (m *mutation) run(_ context.Context, tx *firestore.Transaction) error {
	m.res = driver.MutateResult{}
	var refs []*firestore.DocumentRef
	if m.file != nil {
		refs = append(refs, m.file)
	}
	if m.receipt != nil {
		refs = append(refs, m.receipt)
	}
	var snaps []*firestore.DocumentSnapshot
	if len(refs) > 0 {
		var err error
		if snaps, err = tx.GetAll(refs); err != nil {
			return err
		}
	}
	var fileSnap, receiptSnap *firestore.DocumentSnapshot
	if m.file != nil {
		fileSnap, snaps = snaps[0], snaps[1:]
	}
	if m.receipt != nil {
		receiptSnap = snaps[0]
	}
	decided, cur, err := m.decide(fileSnap, receiptSnap)
	if decided {
		return err // nil: an empty commit, nothing is written
	}

	switch {
	case m.p.Kind == driver.KindWrite && cur == nil:
		if err := tx.Create(m.file, m.data); err != nil {
			return err
		}
	case m.p.Kind == driver.KindWrite:
		if err := tx.Set(m.file, m.data); err != nil {
			return err
		}
	case cur != nil:
		if err := tx.Delete(m.file); err != nil {
			return err
		}
	}
	if m.receipt != nil {
		if err := tx.Create(m.receipt, m.receiptDoc); err != nil {
			return err
		}
	}
	if m.history != nil && (m.p.Kind == driver.KindWrite || cur != nil) {
		// Only a change that applies is recorded (a delete of an absent
		// path is none); a re-run after this commit landed returns above.
		if err := tx.Create(m.history, m.historyDoc); err != nil {
			return err
		}
	}
	m.attempts++
	return nil
}

// commit tries the single-Commit path: the file change and the receipt in
// one Commit whose preconditions (receipt absent; file absent, or at the
// update time remembered for p.Expected) stand in for the transaction's
// reads. It reports false, with nothing written, when the path does not
// apply or a precondition failed; the transaction then decides, and
// recognises this commit if the client re-sent it after it had landed.
func (d *Driver) commit(ctx context.Context, m *mutation) (bool, error) {
	p := m.p
	if d.seen == nil || m.file == nil {
		return false, nil
	}
	//lint:ignore SA1019 a WriteBatch is the one atomic multi-document write
	// that costs a single RPC (a transaction adds BeginTransaction).
	b := d.client.Batch()
	switch {
	case p.Kind == driver.KindWrite && p.Expected == "":
		b.Create(m.file, m.data)
	case p.Kind == driver.KindWrite:
		at, ok := d.seen.at(p.Path, p.Expected)
		if !ok {
			return false, nil
		}
		b.Update(m.file, m.fields, firestore.LastUpdateTime(at))
	case p.Expected != "" && m.receipt != nil:
		at, ok := d.seen.at(p.Path, p.Expected)
		if !ok {
			return false, nil
		}
		b.Delete(m.file, firestore.LastUpdateTime(at))
	default:
		// A plain delete leaves no evidence to recognise a re-sent commit
		// by, and "must be absent" has no delete precondition.
		return false, nil
	}
	if m.receipt != nil {
		b.Create(m.receipt, m.receiptDoc)
	}
	if m.history != nil {
		// Every change this Commit makes applies when it lands; a re-send
		// of a landed Commit fails as a whole, this Create included.
		b.Create(m.history, m.historyDoc)
	}
	wrs, err := b.Commit(ctx)
	switch {
	case err == nil:
		if p.Kind == driver.KindWrite && len(wrs) > 0 {
			d.seen.put(p.Path, p.Version, wrs[0].UpdateTime)
		} else {
			d.seen.drop(p.Path)
		}
		return true, nil
	case conditionFailed(err):
		d.seen.drop(p.Path)
		return false, nil
	}
	return true, fail(ctx, "mutate", err)
}
