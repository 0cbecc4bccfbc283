// Command quickstart shows agentmem on an embedded store persisted on disk:
// no cloud account, no API key. Run it twice to see memory survive.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

func main() {
	ctx := context.Background()
	dir := filepath.Join(os.TempDir(), "agentmem-quickstart")
	s, err := filestore.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	const path = "kamal/main/MEMORY.md"
	fact := "- moved to Hanoi; hates early flights"
	// A background job appends a fact once, even if it is retried.
	op := &store.Operation{ID: "quickstart/fact-1", Fingerprint: fact}
	for attempt := 0; attempt < 16; attempt++ {
		expected, content := "", ""
		if f, err := s.Read(ctx, path, 65536); err == nil {
			expected, content = f.Version, f.Content
		} else if !errors.Is(err, store.ErrNotFound) {
			log.Fatal(err)
		}
		m, err := s.Write(ctx, store.WriteRequest{Path: path, Content: content + fact + "\n", Expected: expected, Operation: op})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("write: replayed=%v\n", m.Replayed)
		break
	}
	f, err := s.Read(ctx, path, 65536)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s/%s:\n%s", dir, path, f.Content)
}
