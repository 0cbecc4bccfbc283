package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// TopK is how far down the matches a needle counts as found.
const TopK = 5

// Folder is the store folder of namespace ns's notebook, as
// [memory.Memory] lays it out with the default agent name.
func Folder(ns string) string { return ns + "/" + memory.DefaultAgentName + "/" }

// Load writes every file of c into folder (ending in "/") through s, with
// workers concurrent writers (at least 1), as fast as the store's public
// API allows; it returns the first error and stops writing then.
func Load(ctx context.Context, s *store.Store, folder string, c Corpus, workers int) error {
	return each(ctx, c.Len(), workers, func(ctx context.Context, i int) error {
		name, content := c.File(i)
		if _, err := s.Write(ctx, store.WriteRequest{Path: folder + name, Content: content}); err != nil {
			return fmt.Errorf("scale: write %s: %w", name, err)
		}
		return nil
	})
}

// each calls do for 0 ≤ i < n from workers goroutines (at least 1), each
// taking the next i; the first error cancels the ctx the others get, stops
// them, and is returned.
func each(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// LoadDirect loads c into folder the way a folder others filled looks to
// a new process: the needle files through s (a store over d, which the
// caller closes) while the folder is empty, then every other file through
// d's CreateFile, with workers concurrent creates (a row as a store writes
// it: content, version, metadata; no receipt, no change feed). It is for
// folders too big to load through a store on an emulator whose cost per
// write grows with what it holds; it returns the first error.
func LoadDirect(ctx context.Context, s *store.Store, d driver.Driver, folder string, c Corpus, workers int) error {
	holds := make(map[int]bool, len(needles))
	for k := range needles {
		holds[needleAt(k, c.Len())] = true
	}
	for i := range c.Len() {
		if !holds[i] {
			continue
		}
		name, content := c.File(i)
		if _, err := s.Write(ctx, store.WriteRequest{Path: folder + name, Content: content}); err != nil {
			return fmt.Errorf("scale: write needle %s: %w", name, err)
		}
	}
	return each(ctx, c.Len(), workers, func(ctx context.Context, i int) error {
		if holds[i] {
			return nil
		}
		name, content := c.File(i)
		f := driver.File{Path: folder + name, Content: content, Version: fmt.Sprintf("scale-load-%08d", i)}
		if err := d.CreateFile(ctx, f); err != nil {
			return fmt.Errorf("scale: create %s: %w", name, err)
		}
		return nil
	})
}

// Answer is one needle's question as search_memory answered it.
type Answer struct {
	// Rank is the 1-based rank of the needle's file among the matches, 0
	// when it is not among them.
	Rank int
	// Result is the tool's result.
	Result *memory.SearchResult
}

// Found reports whether the needle's file is in the first [TopK] matches.
func (a Answer) Found() bool { return a.Rank > 0 && a.Rank <= TopK }

// Ask runs needle k's query through m's search_memory tool, as a model
// calls it, in namespace ns, whose folder holds c.
func Ask(ctx context.Context, m *memory.Memory, ns string, c Corpus, k int) (Answer, error) {
	args, err := json.Marshal(map[string]string{"query": needles[k].Query})
	if err != nil {
		return Answer{}, err
	}
	out, err := m.Call(ctx, memory.Invocation{Namespace: ns}, memory.SearchTool, args)
	if err != nil {
		return Answer{}, fmt.Errorf("scale: search %q: %w", needles[k].Query, err)
	}
	res, ok := out.(*memory.SearchResult)
	if !ok {
		return Answer{}, fmt.Errorf("scale: search %q answered %+v", needles[k].Query, out)
	}
	want := c.NeedleFile(k)
	rank := slices.IndexFunc(res.Matches, func(mt memory.SearchMatch) bool { return mt.File == want }) + 1
	return Answer{Rank: rank, Result: res}, nil
}
