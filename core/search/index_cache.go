// The analysis cache: searches' tokenised view of the files they read,
// bounded in size.

package search

import (
	"container/list"
	"math/bits"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/core/internal/chunk"
	"github.com/agentmem/agentmem/core/internal/lexis"
)

// analysisBudget bounds, in (estimated) bytes, what one Store keeps of its
// searches' analysis of the files and index rows they read.
const analysisBudget = 32 << 20

// analysisCache keeps what a search derives from the content it reads —
// a file body's terms and their positions (BM25), its chunks' spans and
// hashes (hybrid), an index row's decoded vectors — so that the next
// search over unchanged files only reads them. An entry is keyed by the
// row's path and holds the exact content it was derived from: it is used
// only when the content just read is that same string, so a search never
// scores stale analysis, whoever changed the row. The zero value is ready;
// it is safe for concurrent use. Values are never modified once stored.
//
// Eviction resists scans: each search starts a new generation ([analysisCache.tick]),
// and once the budget is spent an entry makes room only by evicting
// entries that neither this search nor the one before used, least
// recently used first; when there are none it is not kept. A scope larger
// than the budget, searched again and again, then keeps most of its files
// cached instead of evicting each one just before the next search needs
// it (plain LRU misses every time on such a cyclic scan).
type analysisCache struct {
	mu    sync.Mutex
	used  int
	gen   uint64 // the current search's generation
	items map[string]*list.Element
	order list.List // front: most recently used
	// spans keeps each file's chunk spans apart, by a sum of the content
	// they were split from (not the content itself): a few KB a file, so
	// they outlive the entries that hold a long file's content.
	spans spanCache
}

// spanBudget bounds, in estimated bytes, the chunk spans a spanCache
// keeps; past it half of them are dropped.
const spanBudget = 8 << 20

// spanCache is each file's chunks (spans and hashes, no text), by path,
// with the length and sum of the content they were split from.
type spanCache struct {
	mu    sync.Mutex
	bytes int
	m     map[string]spanEntry
}

type spanEntry struct {
	sum    uint64
	n      int
	chunks []chunk.Chunk
}

func (c *spanCache) get(p string, n int, sum uint64) []chunk.Chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[p]; ok && e.n == n && e.sum == sum {
		return e.chunks
	}
	return nil
}

func (c *spanCache) put(p string, n int, sum uint64, cs []chunk.Chunk) {
	size := len(p) + 64
	for _, ch := range cs {
		size += 96 + len(ch.Hash) + len(ch.Headings)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]spanEntry{}
	}
	if c.bytes+size > spanBudget {
		drop := len(c.m) / 2
		for k := range c.m {
			if drop == 0 {
				break
			}
			delete(c.m, k)
			drop--
		}
		c.bytes /= 2
	}
	c.m[p] = spanEntry{sum: sum, n: n, chunks: cs}
	c.bytes += size
}

// cached is one entry: the content it was derived from, the value, and
// the generation that last used it.
type cached struct {
	key, content string
	val          any
	size         int
	gen          uint64
}

// tick starts a search's generation.
func (c *analysisCache) tick() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	c.mu.Unlock()
}

// get returns the value stored under key if it was derived from content.
func (c *analysisCache) get(key, content string) any {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.items[key]
	if e == nil {
		return nil
	}
	it := e.Value.(*cached)
	if it.content != content {
		return nil
	}
	it.gen = c.gen
	c.order.MoveToFront(e)
	return it.val
}

// put stores val, derived from content and costing size bytes besides the
// content, under key (replacing what key held), evicting entries past the
// budget that the last two generations did not use; when that does not
// make room, val is not kept. An entry larger than a quarter of the budget
// is not kept either.
func (c *analysisCache) put(key, content string, val any, size int) {
	if c == nil {
		return
	}
	size += len(key) + len(content) + 112 // the entry, its list element and map slot
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.items[key]; e != nil {
		c.used -= e.Value.(*cached).size
		c.order.Remove(e)
		delete(c.items, key)
	}
	if size > analysisBudget/4 {
		return
	}
	for c.used+size > analysisBudget {
		e := c.order.Back()
		if e == nil || e.Value.(*cached).gen+1 >= c.gen {
			return // every entry left is in use: keep them, not this one
		}
		it := e.Value.(*cached)
		c.order.Remove(e)
		delete(c.items, it.key)
		c.used -= it.size
	}
	if c.items == nil {
		c.items = map[string]*list.Element{}
	}
	c.items[key] = c.order.PushFront(&cached{key: key, content: content, val: val, size: size, gen: c.gen})
	c.used += size
}

// Cache key prefixes: a file's analysis and an index row's decoding.
const (
	fileKey = "f\x00"
	rowKey  = "r\x00"
)

// fileAnalysis is what searches derived from one file's (bounded)
// content; either part may be missing (nil) until a search needs it.
type fileAnalysis struct {
	body   *bodyTerms
	chunks []chunk.Chunk // spans and hashes; Text dropped (see chunksOf)
}

// size estimates the bytes of a's parts.
func (a *fileAnalysis) size() int {
	n := 0
	if a.body != nil {
		n += a.body.size()
	}
	for _, c := range a.chunks {
		n += 88 + len(c.Headings) + len(c.Hash)
	}
	return n
}

// bodyTerms is a body's terms (lexis) with their positions, packed: the
// sorted distinct terms concatenated in terms, term i at
// terms[off[i]:off[i+1]], its positions in pos[at[i]:at[i+1]] as rune
// offset pairs (start, end) in order. 32-bit offsets suffice: a body is
// bounded by the search's per-file limit.
type bodyTerms struct {
	n     int // number of terms in the body (with repeats)
	terms string
	off   []uint32
	at    []uint32
	pos   []uint32
}

func (b *bodyTerms) size() int {
	return 96 + len(b.terms) + 4*(len(b.off)+len(b.at)+len(b.pos))
}

// term returns the i-th distinct term.
func (b *bodyTerms) term(i int) string { return b.terms[b.off[i]:b.off[i+1]] }

// positions returns the (start, end) pairs of term t in the body.
func (b *bodyTerms) positions(t string) []uint32 {
	lo, hi := 0, len(b.off)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.term(m) < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(b.off)-1 || b.term(lo) != t {
		return nil
	}
	return b.pos[b.at[lo]:b.at[lo+1]]
}

// lookupAll sets out[k] to positions(ts[k]) for each of the terms ts,
// which must be sorted. A search looks up a dozen terms or more (each
// query word's variants and related words) in every body, most of them
// short notes of few distinct terms: for those, one merge of ts with the
// body's sorted terms takes fewer comparisons than a binary search per
// term; for longer bodies, lookupAll searches for each term.
func (b *bodyTerms) lookupAll(ts []string, out [][]uint32) {
	n := len(b.off) - 1
	if n+len(ts) > len(ts)*(bits.Len(uint(n))+1) {
		for k, t := range ts {
			out[k] = b.positions(t)
		}
		return
	}
	i := 0
	for k, t := range ts {
		for i < n && b.term(i) < t {
			i++
		}
		if i < n && b.term(i) == t {
			out[k] = b.pos[b.at[i]:b.at[i+1]]
		} else {
			out[k] = nil
		}
	}
}

// analyze builds the bodyTerms of content.
func analyze(sc *lexis.Scanner, content string) *bodyTerms {
	byTerm := map[string][]uint32{}
	n := 0
	sc.Each(content, func(t string, start, end int) {
		n++
		byTerm[t] = append(byTerm[t], uint32(start), uint32(end))
	})
	keys := make([]string, 0, len(byTerm))
	size := 0
	for t := range byTerm {
		keys = append(keys, t)
		size += len(t)
	}
	slices.Sort(keys)
	var terms strings.Builder
	terms.Grow(size)
	b := &bodyTerms{n: n, off: make([]uint32, 0, len(keys)+1), at: make([]uint32, 0, len(keys)+1), pos: make([]uint32, 0, 2*n)}
	for _, t := range keys {
		b.off = append(b.off, uint32(terms.Len()))
		terms.WriteString(t)
		b.at = append(b.at, uint32(len(b.pos)))
		b.pos = append(b.pos, byTerm[t]...)
	}
	b.off = append(b.off, uint32(terms.Len()))
	b.at = append(b.at, uint32(len(b.pos)))
	b.terms = terms.String()
	return b
}

// fileAnalysisOf returns the cached analysis of the file at p with this
// content, or an empty one.
func (c *analysisCache) fileAnalysisOf(p, content string) *fileAnalysis {
	if a, ok := c.get(fileKey+p, content).(*fileAnalysis); ok {
		return a
	}
	return &fileAnalysis{}
}

// bodyOf returns the terms of the body of the file at p, content as read,
// from the cache or analysed now (and kept).
func (c *analysisCache) bodyOf(sc *lexis.Scanner, p, content string) *bodyTerms {
	a := c.fileAnalysisOf(p, content)
	if a.body != nil {
		return a.body
	}
	next := &fileAnalysis{body: analyze(sc, content), chunks: a.chunks}
	c.put(fileKey+p, content, next, next.size())
	return next.body
}

// chunksOf returns the chunks of the file at p, content as read, from the
// cache or split now (and kept). Their Text is empty: a search takes the
// text of the few chunks it embeds from the content, by their offsets.
func (c *analysisCache) chunksOf(p, content string) []chunk.Chunk {
	a := c.fileAnalysisOf(p, content)
	if a.chunks != nil {
		return a.chunks
	}
	sum := contentSum(content)
	if cs := c.spans.get(p, len(content), sum); cs != nil {
		return cs
	}
	cs := chunk.Split(path.Base(p), content)
	for i := range cs {
		cs[i].Text = ""
	}
	if cs == nil {
		cs = []chunk.Chunk{} // cached as "no chunk", not "not split yet"
	}
	c.spans.put(p, len(content), sum, cs)
	next := &fileAnalysis{body: a.body, chunks: cs}
	c.put(fileKey+p, content, next, next.size())
	return cs
}

// decodedRow is an index row part as searches use it: its model and part
// count, and its well-formed vectors (normalised) by chunk hash.
type decodedRow struct {
	model string
	parts int
	vecs  indexed
}

// rowOf decodes the index row at rowPath with this content, from the
// cache or now (and kept); nil for a malformed row.
func (c *analysisCache) rowOf(rowPath, content string) *decodedRow {
	if v := c.get(rowKey+rowPath, content); v != nil {
		d, _ := v.(*decodedRow)
		return d
	}
	var d *decodedRow
	size := 0
	if rec := decodeRecord(content); rec != nil {
		d = &decodedRow{model: rec.Model, parts: rec.Parts, vecs: rec.add(indexed{})}
		size = 64 + len(rec.Model)
		for h, v := range d.vecs {
			size += 64 + len(h) + 4*len(v)
		}
	}
	c.put(rowKey+rowPath, content, d, size) // a malformed row is remembered too
	return d
}
