// One folder's term index as data: its documents and postings, kept as
// files change, compacted, and the counts a candidate is scored from.

package search

import (
	"cmp"
	"hash/fnv"
	"io"
	"path"
	"slices"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
)

// size returns the number of files fi holds.
func (fi *folderIndex) size() int {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	return fi.live
}

func (fi *folderIndex) isReady() bool {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	return fi.ready
}

// recorded swaps the size last reported to the termIndex for size and
// returns the old one. Called with the termIndex's lock held.
func (fi *folderIndex) recorded(size int64) int64 {
	old := fi.reported
	fi.reported = size
	return old
}

// put brings p's entry up to date with its content (exists false: there is
// no file at p), and marks p for the next flush when that changed it.
// fi.mu is held.
func (fi *folderIndex) put(sc *lexis.Scanner, p, content string, exists bool) {
	sum := contentSum(content)
	id, ok := fi.ids[p]
	if ok && exists && fi.docs[id].sum == sum || !ok && !exists {
		return // indexed as it is
	}
	fi.remove(p)
	if exists {
		fi.add(sc, p, content, sum)
	}
	fi.dirtySeq++
	fi.dirty[p] = fi.dirtySeq
	fi.maybeCompact()
}

// remove takes p's doc out of the live ones (its postings stay until a
// compaction). fi.mu is held.
func (fi *folderIndex) remove(p string) {
	id, ok := fi.ids[p]
	if !ok {
		return
	}
	d := &fi.docs[id]
	d.live = false
	delete(fi.ids, p)
	fi.live--
	fi.dead++
	fi.sumBody -= int64(d.bodyLen)
	fi.sumName -= int64(d.nameLen)
}

// maybeCompact compacts fi once most of its docs are dead. fi.mu is held.
func (fi *folderIndex) maybeCompact() {
	if fi.dead > 64 && fi.dead > fi.live {
		fi.compact()
	}
}

// reset empties fi (to be loaded again). fi.mu is held.
func (fi *folderIndex) reset() {
	fi.docs, fi.ids, fi.terms = nil, map[string]int32{}, map[string][]posting{}
	fi.live, fi.dead, fi.sumBody, fi.sumName, fi.bytes = 0, 0, 0, 0, 0
}

// reconcileAfter is how long a folder of n files waits between checks.
func reconcileAfter(n int) time.Duration {
	return max(reconcileEvery, time.Duration(n)*reconcilePerFile)
}

// contentSum is the FNV-1a sum of content.
func contentSum(content string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, content)
	return h.Sum64()
}

// add indexes f as a new doc, from its content. fi.mu is held.
func (fi *folderIndex) add(sc *lexis.Scanner, p, content string, sum uint64) {
	counts := map[string]*posting{}
	count := func(text string, field func(*posting) *uint16) int32 {
		n := int32(0)
		sc.Each(text, func(t string, _, _ int) {
			n++
			pt := counts[t]
			if pt == nil {
				pt = &posting{}
				counts[t] = pt
			}
			f := field(pt)
			*f = min(*f+1, maxTF)
		})
		return n
	}
	bodyLen := count(content, func(pt *posting) *uint16 { return &pt.body })
	nameLen := count(nameField(path.Base(p)), func(pt *posting) *uint16 { return &pt.name })
	fi.insert(p, sum, bodyLen, nameLen, func(yield func(t string, body, name uint16)) {
		for t, pt := range counts {
			yield(t, pt.body, pt.name)
		}
	})
}

// insert adds a live doc at p (which has none) with its lengths and the
// frequencies of its terms. fi.mu is held.
func (fi *folderIndex) insert(p string, sum uint64, bodyLen, nameLen int32, terms func(yield func(t string, body, name uint16))) {
	id := int32(len(fi.docs))
	n := 0
	terms(func(t string, body, name uint16) {
		n++
		ps, ok := fi.terms[t]
		if !ok {
			fi.bytes += int64(len(t)) + 64
		}
		fi.terms[t] = append(ps, posting{doc: id, body: body, name: name})
	})
	fi.addDoc(p, sum, bodyLen, nameLen, n)
}

// addDoc records a live doc at p (which has none) holding n distinct
// terms, whose postings the caller adds, and returns its id. fi.mu is
// held.
func (fi *folderIndex) addDoc(p string, sum uint64, bodyLen, nameLen int32, n int) int32 {
	id := int32(len(fi.docs))
	fi.docs = append(fi.docs, tdoc{path: p, sum: sum, bodyLen: bodyLen, nameLen: nameLen, live: true})
	fi.ids[p] = id
	fi.live++
	fi.sumBody += int64(bodyLen)
	fi.sumName += int64(nameLen)
	fi.bytes += int64(n)*8 + int64(len(p)) + 72
	return id
}

// compact rewrites the postings without the docs no longer live. fi.mu is
// held.
func (fi *folderIndex) compact() {
	remap := make([]int32, len(fi.docs))
	docs := make([]tdoc, 0, fi.live)
	for i, d := range fi.docs {
		remap[i] = -1
		if d.live {
			remap[i] = int32(len(docs))
			fi.ids[d.path] = remap[i]
			docs = append(docs, d)
		}
	}
	var bytes int64
	for t, ps := range fi.terms {
		out := ps[:0]
		for _, pt := range ps {
			if id := remap[pt.doc]; id >= 0 {
				pt.doc = id
				out = append(out, pt)
			}
		}
		if len(out) == 0 {
			delete(fi.terms, t)
			continue
		}
		fi.terms[t] = slices.Clip(out)
		bytes += int64(len(t)) + 64 + int64(len(out))*8
	}
	for _, d := range docs {
		bytes += int64(len(d.path)) + 72
	}
	fi.docs, fi.dead, fi.bytes = docs, 0, bytes
}

// capTerms returns the first of paths (best first) whose files hold at
// most maxTerms terms together, and at least keep of them.
func (fi *folderIndex) capTerms(paths []string, maxTerms, keep int) []string {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	total := 0
	for i, p := range paths {
		if id, ok := fi.ids[p]; ok {
			total += int(fi.docs[id].bodyLen)
		}
		if total > maxTerms && i >= keep {
			return paths[:i]
		}
	}
	return paths
}

// has reports whether fi holds a file at p.
func (fi *folderIndex) has(p string) bool {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	_, ok := fi.ids[p]
	return ok
}

// indexedAs reports whether fi has p indexed with this content (cut to
// maxIndexedChars).
func (fi *folderIndex) indexedAs(p, content string) bool {
	content, _ = driver.CutRunes(content, maxIndexedChars)
	sum := contentSum(content)
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	id, ok := fi.ids[p]
	return ok && fi.docs[id].sum == sum
}

// bodyCounts returns the length of p's body and the frequency in it of
// each of bq's groups of terms (variants weighted, as bm25Query.score
// counts them), from p's postings; nil when fi holds no p.
func (fi *folderIndex) bodyCounts(bq *bm25Query, p string) *indexedBody {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	id, ok := fi.ids[p]
	if !ok || fi.docs[id].bodyLen >= maxTF {
		return nil // a frequency may have been capped
	}
	out := &indexedBody{n: int(fi.docs[id].bodyLen), tf: make([]float64, len(bq.q))}
	for j, g := range bq.q {
		for v, t := range g {
			ps := fi.terms[t]
			// A term's postings are in doc order (ids only grow).
			i, found := slices.BinarySearchFunc(ps, id, func(pt posting, id int32) int { return cmp.Compare(pt.doc, id) })
			if !found || ps[i].body == 0 {
				continue
			}
			w := 1.0
			if v > 0 {
				w = variantWeight
			}
			out.tf[j] += w * float64(ps[i].body)
		}
	}
	return out
}
