package firestore_test

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// TestHistoryRPCs counts the RPCs of an idempotent write (a write with an
// operation over the version just read) with history off and on: the
// entry rides in the write's one Commit, so both are one Commit.
func TestHistoryRPCs(t *testing.T) {
	client, c := countingClient(t)
	for _, on := range []bool{false, true} {
		d, err := firestore.New(t.Context(), client, "rpc-"+firestore.RandomID(), nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := &store.Options{}
		if on {
			opts.History = &store.HistoryOptions{}
		}
		s := store.New(d, opts)
		m, err := s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "one\n"})
		if err != nil {
			t.Fatal(err)
		}
		clear(c.byMethod)
		c.on.Store(true)
		_, err = s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "two\n", Expected: m.Version,
			Operation: &store.Operation{ID: fmt.Sprint("op-", on), Fingerprint: "fp"}})
		c.on.Store(false)
		if err != nil {
			t.Fatal(err)
		}
		if n, detail := c.total(); n != 1 || detail != "Commit=1" {
			t.Errorf("history on=%v: %d RPCs (%s), want one Commit", on, n, detail)
		}
		if on {
			h, err := s.History(t.Context(), store.HistoryRequest{Path: "u/a.md", Limit: 10})
			if err != nil || len(h.Entries) != 2 || h.Entries[0].Content != "two\n" {
				t.Fatalf("history = %+v, %v", h, err)
			}
		}
	}
}
