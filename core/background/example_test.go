package background_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/background"
)

// Indexer is a value with background work: its constructor starts the
// worker, Shutdown drains it within a deadline.
type Indexer struct {
	bg   *background.Group
	jobs chan string
}

func NewIndexer() *Indexer {
	ix := &Indexer{bg: background.New(), jobs: make(chan string, 16)}
	ix.bg.Go(ix.work)
	return ix
}

func (ix *Indexer) work(ctx context.Context) {
	for {
		select {
		case p := <-ix.jobs:
			fmt.Println("indexed", p)
		case <-ix.bg.Stopping(): // finish what is queued, then return
			for {
				select {
				case p := <-ix.jobs:
					fmt.Println("indexed", p)
				default:
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

func (ix *Indexer) Shutdown(ctx context.Context) error { return ix.bg.Shutdown(ctx) }

func Example() {
	ix := NewIndexer()
	ix.jobs <- "a.md"
	ix.jobs <- "b.md"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ix.Shutdown(ctx); err != nil {
		fmt.Println("gave up:", err)
	}
	fmt.Println("stopped")
	// Output:
	// indexed a.md
	// indexed b.md
	// stopped
}
