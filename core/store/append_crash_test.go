package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// crashAppender is an Appender that, like filestore, keeps its receipt
// pending while it writes the file, over a driver without a Mutator; with
// crash set it stops after the file, as a process that died there.
type crashAppender struct {
	driver.Driver
	crash bool
}

var errCrash = errors.New("crashed after the file")

func (c *crashAppender) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	if p.Receipt != nil {
		if r, err := c.GetReceipt(ctx, p.Receipt.ID); err != nil || r != nil {
			return driver.AppendResult{Existing: r}, err
		}
	}
	cur, err := c.GetFile(ctx, p.Path)
	if err != nil || cur == nil {
		return driver.AppendResult{Missing: cur == nil}, err
	}
	r := *p.Receipt
	r.Expected, r.Existed, r.Completed, r.Version = cur.Version, true, false, p.Version
	if err := c.ReserveReceipt(ctx, r); err != nil {
		return driver.AppendResult{}, err
	}
	f := driver.File{Path: p.Path, Content: driver.AppendedContent(cur.Content, p.Entry), Version: p.Version, OperationID: r.ID, Metadata: p.Metadata}
	if err := c.ReplaceFile(ctx, f, cur.Version); err != nil {
		return driver.AppendResult{}, err
	}
	if c.crash {
		return driver.AppendResult{}, errCrash
	}
	r.Completed = true
	return driver.AppendResult{}, c.CompleteReceipt(ctx, r)
}

// TestAppendCrashThenOverwrite: an append whose receipt stayed pending
// (its process died after writing the file) and whose row another writer
// overwrote since must still replay as done, never append again.
func TestAppendCrashThenOverwrite(t *testing.T) {
	ctx := t.Context()
	d := &crashAppender{Driver: newMemDriver(t), crash: true}
	s := store.New(d, nil)
	if _, err := s.Write(ctx, store.WriteRequest{Path: "a.md", Content: "x\n"}); err != nil {
		t.Fatal(err)
	}
	op := &store.Operation{ID: "job-1/step-1", Fingerprint: "fp"}
	req := store.AppendRequest{Path: "a.md", Text: "line", MaxChars: 1000, Operation: op}
	if _, err := s.Append(ctx, req); !errors.Is(err, errCrash) {
		t.Fatalf("crashing append: %v", err)
	}
	f, err := s.Read(ctx, "a.md", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "a.md", Content: f.Content + "other\n", Expected: f.Version}); err != nil {
		t.Fatal(err)
	}
	d.crash = false
	m, err := s.Append(ctx, req)
	if err != nil || !m.Replayed {
		t.Fatalf("replay = %+v, %v; want the crashed append's result", m, err)
	}
	f, err = s.Read(ctx, "a.md", 1000)
	if err != nil || strings.Count(f.Content, "line\n") != 1 {
		t.Fatalf("after the replay: %q, %v", f.Content, err)
	}
}
