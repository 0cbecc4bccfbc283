package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// The scheme "memlog:FILE" is a test-only backend: an in-memory store
// (memstore, which keeps history) whose every successful change is
// appended to FILE and replayed when the next process opens it, so that
// the agentmem processes of one script share it like a database file.
// It is registered in the test binary, which is also the agentmem command
// of the scripts. It implements the primitives and driver.Historian only,
// so the store records history the way it does over a backend without
// atomic writes.
//
// With $MEMLOG_RACE set to a path, the first write of that path is
// preceded by another write of it ("- written meanwhile"), as if a second
// writer got in between a command's read and its compare-and-swap.
func init() { store.Register("memlog", openJournal) }

// raceEnv names the variable that makes a memlog write lose a race.
const raceEnv = "MEMLOG_RACE"

// journalRecord is one change in the journal, a JSON line.
type journalRecord struct {
	Op       string               `json:"op"`
	File     *driver.File         `json:"file,omitempty"`
	Receipt  *driver.Receipt      `json:"receipt,omitempty"`
	Entry    *driver.HistoryEntry `json:"entry,omitempty"`
	Path     string               `json:"path,omitempty"`
	Version  string               `json:"version,omitempty"`
	Expected string               `json:"expected,omitempty"`
}

// journal is the memlog driver.
type journal struct {
	mem  *memstore.Driver
	mu   *sync.Mutex
	f    *os.File
	race string // a path whose next write loses a race, or ""
}

var (
	_ driver.Driver    = (*journal)(nil)
	_ driver.Historian = (*journal)(nil)
)

// openJournal opens "memlog:FILE", replaying FILE.
func openJournal(ctx context.Context, u *url.URL) (driver.Driver, error) {
	name := u.Opaque
	if name == "" {
		name = u.Path
	}
	if name == "" {
		return nil, driver.URLError(u, "write memlog:FILE")
	}
	if err := driver.CheckQuery(u); err != nil {
		return nil, err
	}
	mem, err := memstore.New(ctx, nil)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	j := &journal{mem: mem, mu: new(sync.Mutex), f: f, race: os.Getenv(raceEnv)}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var r journalRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			f.Close()
			return nil, fmt.Errorf("memlog %s line %d: %w", name, n, err)
		}
		if err := j.apply(ctx, r); err != nil {
			f.Close()
			return nil, fmt.Errorf("memlog %s line %d: replaying %s: %w", name, n, r.Op, err)
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// apply makes change r on the in-memory driver.
func (j *journal) apply(ctx context.Context, r journalRecord) error {
	switch r.Op {
	case "create":
		return j.mem.CreateFile(ctx, *r.File)
	case "replace":
		return j.mem.ReplaceFile(ctx, *r.File, r.Expected)
	case "delete":
		return j.mem.DeleteFile(ctx, r.Path, r.Expected)
	case "reserve":
		return j.mem.ReserveReceipt(ctx, *r.Receipt)
	case "complete":
		return j.mem.CompleteReceipt(ctx, *r.Receipt)
	case "drop":
		return j.mem.DropReceipt(ctx, r.Path, r.Version)
	case "put-history":
		return j.mem.PutHistory(ctx, *r.Entry)
	case "complete-history":
		return j.mem.CompleteHistory(ctx, r.Path, r.Version)
	case "drop-history":
		return j.mem.DropHistory(ctx, r.Path, r.Version)
	case "delete-history":
		_, err := j.mem.DeleteHistory(ctx, r.Path)
		return err
	}
	return fmt.Errorf("unknown op %q", r.Op)
}

// do applies r and appends it to the journal when it succeeds.
func (j *journal) do(ctx context.Context, r journalRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.apply(ctx, r); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = j.f.Write(append(b, '\n'))
	return err
}

func (j *journal) GetFile(ctx context.Context, path string) (*driver.File, error) {
	return j.mem.GetFile(ctx, path)
}

func (j *journal) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	return j.mem.ListFiles(ctx, p)
}

// interfere makes the write of another writer to path, once, when path is
// the one $MEMLOG_RACE names: through a store over this driver without
// the hook, so that it is recorded like any write.
func (j *journal) interfere(ctx context.Context, path string) error {
	if j.race == "" || j.race != path {
		return nil
	}
	j.race = ""
	other := store.New(&journal{mem: j.mem, mu: j.mu, f: j.f}, &store.Options{History: &store.HistoryOptions{}})
	w := store.WriteRequest{Path: path, Content: "- written meanwhile\n"}
	if f, err := other.Read(ctx, path, 1); err == nil {
		w.Expected = f.Version
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	_, err := other.Write(ctx, w)
	return err
}

func (j *journal) CreateFile(ctx context.Context, f driver.File) error {
	if err := j.interfere(ctx, f.Path); err != nil {
		return err
	}
	return j.do(ctx, journalRecord{Op: "create", File: &f})
}

func (j *journal) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	if err := j.interfere(ctx, f.Path); err != nil {
		return err
	}
	return j.do(ctx, journalRecord{Op: "replace", File: &f, Expected: expected})
}

func (j *journal) DeleteFile(ctx context.Context, path, expected string) error {
	return j.do(ctx, journalRecord{Op: "delete", Path: path, Expected: expected})
}

func (j *journal) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	return j.mem.GetReceipt(ctx, id)
}

func (j *journal) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	return j.do(ctx, journalRecord{Op: "reserve", Receipt: &r})
}

func (j *journal) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	return j.do(ctx, journalRecord{Op: "complete", Receipt: &r})
}

func (j *journal) DropReceipt(ctx context.Context, id, version string) error {
	return j.do(ctx, journalRecord{Op: "drop", Path: id, Version: version})
}

func (j *journal) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	return j.do(ctx, journalRecord{Op: "put-history", Entry: &e})
}

func (j *journal) CompleteHistory(ctx context.Context, path, version string) error {
	return j.do(ctx, journalRecord{Op: "complete-history", Path: path, Version: version})
}

func (j *journal) DropHistory(ctx context.Context, path, version string) error {
	return j.do(ctx, journalRecord{Op: "drop-history", Path: path, Version: version})
}

func (j *journal) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	return j.mem.GetHistory(ctx, path, version)
}

func (j *journal) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	return j.mem.ListHistory(ctx, p)
}

// DeleteHistory journals the prefix; the count comes from the replay of
// the in-memory driver, the same in every process.
func (j *journal) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	n, err := j.mem.DeleteHistory(ctx, prefix)
	if err != nil {
		return n, err
	}
	b, err := json.Marshal(journalRecord{Op: "delete-history", Path: prefix})
	if err != nil {
		return n, err
	}
	_, err = j.f.Write(append(b, '\n'))
	return n, err
}

func (j *journal) Close() error {
	return errors.Join(j.mem.Close(), j.f.Close())
}
