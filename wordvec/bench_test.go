package wordvec

import (
	"runtime"
	"strings"
	"testing"
)

// BenchmarkLoad parses the embedded table (what New does once per process)
// and reports the heap it keeps: the index only, as the vectors stay in the
// binary's data.
func BenchmarkLoad(b *testing.B) {
	var before, after runtime.MemStats
	var keep *table
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		t, err := parseTable(tableData)
		if err != nil {
			b.Fatal(err)
		}
		keep = t
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "heap-bytes")
	b.ReportMetric(float64(len(tableData)), "table-bytes")
	runtime.KeepAlive(keep)
}

const note = "- Prefers trains to planes for trips under six hours.\n- Always a window seat; gets motion sickness facing backwards.\n"

func benchmarkEmbed(b *testing.B, text string) {
	e := newEmbedder(b)
	texts := []string{text}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := e.Embed(b.Context(), texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedNote embeds one short note (~120 characters).
func BenchmarkEmbedNote(b *testing.B) { benchmarkEmbed(b, note) }

// BenchmarkEmbedChunk embeds one 2,000-character chunk.
func BenchmarkEmbedChunk(b *testing.B) {
	benchmarkEmbed(b, strings.Repeat(note, 2000/len(note)+1)[:2000])
}
