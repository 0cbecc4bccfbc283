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
