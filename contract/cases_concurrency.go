package contract

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

var concurrencyCases = []Case{
	{"concurrent_appends", func(t *testing.T, e *Env) {
		w, n := e.h.Writers, e.h.Appends
		var wg sync.WaitGroup
		errs := make(chan error, w)
		for i := 0; i < w; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < n; j++ {
					line := fmt.Sprintf("w%d-%d", i, j)
					var o *store.Operation
					if j%2 == 0 {
						o = op("append-"+line, "fp")
					}
					if _, err := AppendOnce(ctx(t), e.Store, "c/MEMORY.md", line, o, 100000); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		content := read(t, e.Store, "c/MEMORY.md", 1<<20).Content
		lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
		eq(t, "lines", len(lines), w*n)
		seen := map[string]bool{}
		for _, l := range lines {
			if seen[l] {
				t.Fatalf("line %q twice", l)
			}
			seen[l] = true
		}
	}},
	{"append_contention", func(t *testing.T, e *Env) {
		// Store.Append never fails for contention (no deadline here): 16
		// appenders × 10 appends with unique operations onto one file that
		// does not exist yet; every line lands exactly once.
		const w, n, path = 16, 10, "c/shared.md"
		var wg sync.WaitGroup
		errs := make(chan error, w*n)
		var mu sync.Mutex
		results := map[string]store.Mutation{}
		for i := range w {
			wg.Go(func() {
				for j := range n {
					line := fmt.Sprintf("w%d-%d", i, j)
					m, err := e.Store.Append(ctx(t), store.AppendRequest{Path: path, Text: line + " \n\n", MaxChars: 1 << 16, Operation: op("app-"+line, "fp-"+line)})
					if err == nil && (m.Version == "" || m.Replayed) {
						err = fmt.Errorf("append %s: result %+v", line, m)
					}
					if err != nil {
						errs <- err
					}
					mu.Lock()
					results[line] = m
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		f := read(t, e.Store, path, 1<<20)
		lines := strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n")
		eq(t, "lines", len(lines), w*n)
		seen := map[string]bool{}
		for _, l := range lines {
			if seen[l] || !strings.HasPrefix(l, "w") {
				t.Fatalf("line %q twice or malformed:\n%s", l, f.Content)
			}
			seen[l] = true
		}
		// A replay answers from the receipt and writes nothing.
		m, err := e.Store.Append(ctx(t), store.AppendRequest{Path: path, Text: "w0-0", MaxChars: 1 << 16, Operation: op("app-w0-0", "fp-w0-0")})
		if want := results["w0-0"]; err != nil || !m.Replayed || m.Version != want.Version || m.Existed != want.Existed {
			t.Fatalf("replay: %+v %v, want %+v", m, err, want)
		}
		if _, err := e.Store.Append(ctx(t), store.AppendRequest{Path: path, Text: "other", MaxChars: 1 << 16, Operation: op("app-w0-0", "fp-other")}); !errors.Is(err, store.ErrOperationConflict) {
			t.Fatalf("reused operation: %v", err)
		}
		// The bound holds: an append past MaxChars fails, nothing lands.
		size := len([]rune(f.Content))
		_, err = e.Store.Append(ctx(t), store.AppendRequest{Path: path, Text: "too long", MaxChars: size + 5, Operation: op("app-big", "fp-big")})
		if !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("over the bound: %v", err)
		}
		if g := read(t, e.Store, path, 1<<20); g.Version != f.Version || g.Content != f.Content {
			t.Fatalf("a refused append changed the file")
		}
		// Exactly at the bound it lands ("xyzw\n" is 5 runes).
		m, err = e.Store.Append(ctx(t), store.AppendRequest{Path: path, Text: "xyzw", MaxChars: size + 5, Operation: op("app-fit", "fp-fit")})
		if err != nil || m.Replayed || !m.Existed {
			t.Fatalf("append at the bound: %+v %v", m, err)
		}
		if g := read(t, e.Store, path, 1<<20); g.Content != f.Content+"xyzw\n" || g.Version != m.Version {
			t.Fatalf("append at the bound: %q", g.Content)
		}
	}},
	{"concurrent_creates", func(t *testing.T, e *Env) {
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, lost := 0, 0
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "c/new.md", Content: fmt.Sprint(i), Operation: op(fmt.Sprint("create-", i), "fp")})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, store.ErrConflict):
					lost++
				default:
					t.Errorf("create: %v", err)
				}
			}()
		}
		wg.Wait()
		eq(t, "winners", won, 1)
		eq(t, "losers", lost, n-1)
	}},
}
