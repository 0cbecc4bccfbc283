// Package scale is the corpus and the harness of the search-at-scale
// benchmark (issue 36; e2e's BenchmarkSearchScale): one user's folder of
// many files, 20 of them holding one unusual fact each ([Needles]), each
// asked for later in other words through the notebook's search_memory
// tool, as an agent would.
//
// Two shapes: [Notes], N short notes of 6 to 12 conversation turns (the
// filler of e2e/internal/retrieval's generated sets, [retrieval.ShortChat],
// so word statistics look like chat), and [History], M files of about
// 64 KB of pruned conversation history, as a history window's rotated
// series leaves them. Both are deterministic: the same size and seed give
// the same files, generated one at a time ([Corpus.File]) so that 100,000
// of them never sit in memory at once outside the store.
package scale

import (
	"fmt"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/e2e/internal/retrieval"
)

// Corpus is a folder's files, generated on demand.
type Corpus interface {
	// Len is the number of files.
	Len() int
	// File returns file i (0 ≤ i < Len): its name in the folder and its
	// content.
	File(i int) (name, content string)
	// NeedleFile returns the name of the file that holds needle k.
	NeedleFile(k int) string
}

// needleAt is the index, among total files, of needle k's file: the
// needles are spread evenly over the folder's name order, so a search that
// reads only the first files of a big folder misses the later ones.
func needleAt(k, total int) int { return (2*k + 1) * total / (2 * len(needles)) }

// needlesIn returns the needles whose file is i of total.
func needlesIn(i, total int) []int {
	var out []int
	for k := range needles {
		if needleAt(k, total) == i {
			out = append(out, k)
		}
	}
	return out
}

// acks are the assistant's answers to a needle's turn.
var acks = []string{"Noted, thanks for telling me.", "Got it, I've written that down.", "Thanks, that's good to know.", "Okay, I'll keep that in mind."}

// Notes is a folder of short notes: N filler notes and the 20 needle
// notes among them (N+20 files, named note-000000.md on), each a dated
// heading and 6 to 12 turns; a needle's note has its fact as one more user
// turn, and the assistant's acknowledgement, at a random place.
type Notes struct {
	// N is the number of filler notes.
	N int
	// Seed picks the notes.
	Seed uint64
}

// Len is N plus the 20 needles.
func (c Notes) Len() int { return max(c.N, 0) + len(needles) }

func (c Notes) name(i int) string { return fmt.Sprintf("note-%06d.md", i) }

// NeedleFile implements [Corpus].
func (c Notes) NeedleFile(k int) string { return c.name(needleAt(k, c.Len())) }

// File implements [Corpus].
func (c Notes) File(i int) (name, content string) {
	rng := rand.New(rand.NewPCG(c.Seed, uint64(i)))
	at := time.Date(2023, time.January, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(3*365*24*60)) * time.Minute)
	turns := retrieval.ShortChat(rng, 6+rng.IntN(7))
	for _, k := range needlesIn(i, c.Len()) {
		at := rng.IntN(len(turns)/2+1) * 2
		turns = slices.Insert(turns, at, "User: "+needles[k].Fact, "Assistant: "+acks[rng.IntN(len(acks))])
	}
	return c.name(i), fmt.Sprintf("# Chat, %s\n\n%s\n", at.Format("Monday 2 January 2006, 15:04"), strings.Join(turns, "\n"))
}

// HistoryMaxRunes bounds a [History] file: under the notebook's per-file
// bound (memory.DefaultMaxMemorySize, 65,536), so a search reads it whole.
const HistoryMaxRunes = 64_000

// History is a rotated series of pruned history: M files
// (pruned.SeriesPath of "pruned.md": pruned.md, pruned_0002.md, …) of
// 60,000 to 64,000 characters, each line "- author (time): text" as a
// history window prunes them, the needles' facts as user lines inside
// some of them (spread over the series; several in one file when M < 20).
type History struct {
	// M is the number of files.
	M int
	// Seed picks their text.
	Seed uint64
}

// Len is M.
func (h History) Len() int { return max(h.M, 0) }

func (h History) name(i int) string { return pruned.SeriesPath("pruned.md", i+1) }

// NeedleFile implements [Corpus].
func (h History) NeedleFile(k int) string { return h.name(needleAt(k, h.Len())) }

// File implements [Corpus].
func (h History) File(i int) (name, content string) {
	rng := rand.New(rand.NewPCG(h.Seed, uint64(i)^0x6a09e667f3bcc908))
	at := time.Date(2024, time.March, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(i) * 36 * time.Hour)
	line := func(author, text string) string {
		at = at.Add(time.Duration(20+rng.IntN(200)) * time.Second)
		return "- " + author + " (" + at.Format(time.RFC3339) + "): " + text + "\n"
	}
	var facts []string
	for _, k := range needlesIn(i, h.Len()) {
		facts = append(facts, needles[k].Fact)
	}
	target := HistoryMaxRunes - 4000 + rng.IntN(4000)
	var b strings.Builder
	size := 0
	for size < target {
		for _, t := range retrieval.ShortChat(rng, 2+rng.IntN(6)) {
			author, text, _ := strings.Cut(t, ": ")
			if author != "User" {
				author = "assistant"
			}
			if len(facts) > 0 && rng.IntN(40) == 0 {
				t, facts = line("user", facts[0]), facts[1:]
				b.WriteString(t)
				size += utf8.RuneCountInString(t)
			}
			l := line(strings.ToLower(author), text)
			n := utf8.RuneCountInString(l)
			if size+n > HistoryMaxRunes-400*len(facts)-200 {
				size = target // full: the facts left go last
				break
			}
			b.WriteString(l)
			size += n
		}
	}
	for _, f := range facts {
		b.WriteString(line("user", f))
	}
	return h.name(i), b.String()
}
