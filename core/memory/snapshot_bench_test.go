package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/memory/internal/notes"

	"github.com/agentmem/agentmem/core/store"
)

// notebook returns MEMORY.md text of about size bytes: bullet lines of
// ~60 characters, some non-ASCII.
func notebook(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- fact %d: the user prefers uv over pip; déploiement via staging ✓\n", i)
	}
	return b.String()
}

// BenchmarkSnapshot is Memory.Snapshot on memstore with a MEMORY.md of
// 1 KB and of 64 KB (the default MaxMemorySize) and default limits: the
// block shows at most the last 200 lines within ~8,000 characters, so the
// rendering should cost about the same at both sizes (the read of the
// file itself grows with it).
func BenchmarkSnapshot(b *testing.B) {
	for _, size := range []int{1 << 10, 8 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("size=%dKB", size>>10), func(b *testing.B) {
			content := notebook(size - 200)
			s := store.New(memtest.NewDriver(b), nil)
			for p, c := range map[string]string{"u/main/MEMORY.md": content, "u/main/project.md": "- x\n"} {
				if _, err := s.Write(b.Context(), store.WriteRequest{Path: p, Content: c}); err != nil {
					b.Fatal(err)
				}
			}
			m, err := New(s, nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				block, err := m.Snapshot(b.Context(), "u")
				if err != nil || !strings.Contains(block, "fact") {
					b.Fatalf("snapshot = %q, %v", block, err)
				}
			}
		})
	}
}

// BenchmarkSnapshotRender is the rendering alone (the view of MEMORY.md
// and fitting it to the budget; no store read) at 1 KB and 64 KB: bounded
// by what is shown, plus one vectorised count of the earlier line breaks.
func BenchmarkSnapshotRender(b *testing.B) {
	m, err := New(store.New(memtest.NewDriver(b), nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	budget := m.limits.MaxTokens*CharsPerToken - notes.Runes(m.Instructions())
	for _, size := range []int{1 << 10, 8 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("size=%dKB", size>>10), func(b *testing.B) {
			content := notebook(size - 200)
			for b.Loop() {
				if block := m.newView(content, []string{"project.md"}, "", false, false).fit(budget); block == "" {
					b.Fatal("empty block")
				}
			}
		})
	}
}
