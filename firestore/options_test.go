package firestore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// TestCacheSize counts the RPCs of an idempotent write after a read: with
// the cache at its default size (CacheSize 0) or a small one, Mutate is
// one Commit; with a negative CacheSize the cache is off and Mutate runs
// the transaction.
func TestCacheSize(t *testing.T) {
	client, c := countingClient(t)
	for _, size := range []int{0, 1, -1} {
		d, err := firestore.New(t.Context(), client, "cache-"+firestore.RandomID(), &firestore.Options{CacheSize: size})
		if err != nil {
			t.Fatal(err)
		}
		s := store.New(d, nil)
		m, err := s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "one\n"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(t.Context(), "u/a.md", 100); err != nil {
			t.Fatal(err)
		}
		clear(c.byMethod)
		c.on.Store(true)
		_, err = s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "two\n", Expected: m.Version,
			Operation: &store.Operation{ID: fmt.Sprint("op-", size), Fingerprint: "fp"}})
		c.on.Store(false)
		if err != nil {
			t.Fatal(err)
		}
		n, detail := c.total()
		switch {
		case size >= 0 && (n != 1 || detail != "Commit=1"):
			t.Errorf("CacheSize %d: %d RPCs (%s), want one Commit", size, n, detail)
		case size < 0 && !strings.Contains(detail, "BeginTransaction=1"):
			t.Errorf("CacheSize %d: %d RPCs (%s), want the transaction (the cache off)", size, n, detail)
		}
	}
}
