// The term index on disk: each folder's index persisted as segments, rows
// written through the driver's primitives under the folder's reserved
// segment TermSegment, so that a new process loads a folder's index from a
// few rows instead of reading and analysing every file, and processes that
// share a store see each other's changes.

package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/internal/lexis"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// TermSegment is the folder, inside each folder whose files were searched,
// where the store keeps the persisted term index of those files: a
// manifest ("kamal/notes/.agentmem-terms/manifest") naming the live
// segments, and each segment's rows ("…/.agentmem-terms/<id>-1", "-2", …).
// Like [IndexSegment] its name starts with [rowpath.Reserved]: the
// rows are derived data, written through the driver's primitives, never
// listed, walked, searched or recorded in history as files, erased by
// store.Store.ForgetIndex and rebuilt after store.Store.Reindex.
//
// A segment lists files (their name, content sum and lengths, and their
// terms with frequencies) and files deleted; the manifest is replaced by a
// compare-and-swap on its version, after the rows it names are written, so
// a reader never follows it to a missing row. Changes since the last
// segment are written as a new one, a second after they land; past 8 of
// them they are merged into one, and once the files changed since the
// first (base) segment are a quarter of it, or the folder holds at most
// 1,000 files, the whole index is written again as one segment and the
// old rows are removed.
const TermSegment = ".agentmem-terms"

// Bounds of the persisted term index.
const (
	// maxSegRowChars bounds one segment row's text (base64, so ASCII):
	// well under DynamoDB's 400 KB item limit with the row's keys.
	maxSegRowChars = 256_000
	// flushDelay is how long a folder's changes wait before they are
	// written as a segment: a burst of writes is written once.
	flushDelay = time.Second
	// maxDeltas is how many segments of changes a manifest names before
	// they are merged into one; wholeBelow is the folder size up to which
	// every flush writes the index whole (its estimated size in memory, 1 MB:
	// about 1,400 short notes, two or three rows). A larger
	// index is written whole again once the files changed since its base
	// segment are a quarter of the base's: each write is rewritten a
	// bounded number of times.
	maxDeltas  = 8
	wholeBelow = 1 << 20
	// maxBaseAge is how long a base segment may keep the words of files
	// deleted or rewritten since: a folder with changes whose base is
	// older is written whole again.
	maxBaseAge = 24 * time.Hour
	// maxSegRows bounds the rows a manifest may name for one segment.
	maxSegRows = 4096
	// manifestRecheck is how often, at most, a search looks for segments
	// another process wrote.
	manifestRecheck = time.Second
	// orphanAge is how old a segment row no manifest names must be before
	// it is removed: younger, it may be a writer's that has yet to
	// replace the manifest.
	orphanAge = 10 * time.Minute
	// maxFlushAttempts bounds the manifest swaps one flush tries while
	// other processes keep replacing it.
	maxFlushAttempts = 8
)

// segMagic starts every encoded segment (its format).
const segMagic = "AMT1"

// errSegment reports a segment or manifest that cannot be read as one.
var errSegment = errors.New("search: the persisted search index is unreadable")

// termManifest is the content of a folder's manifest row.
type termManifest struct {
	Format   int      `json:"format"`
	Segments []segRef `json:"segments"`
	// Checked is when the folder's files were last all read again
	// (reconcile): a process that loads the index keeps that schedule.
	Checked time.Time `json:"checked,omitzero"`
	// Analyzer is analyzerID() of the analyzer that made the segments: a
	// manifest of another one is unreadable (the index is built again).
	Analyzer string `json:"analyzer"`
}

// analyzerID fingerprints the analyzer (and the index's bounds): the
// terms it makes of a probe text that exercises folding, stemming, stop
// words and CJK, hashed. An analyzer that changes its terms changes it.
var analyzerID = sync.OnceValue(func() string {
	const probe = "Ünïcödé Running runners ran; the QUICK brown fox's jumps — naïve café 東京タワー 서울 Zürich 2026-12-01 e-mail."
	h := fnv.New64a()
	lexis.NewScanner().Each(probe, func(t string, _, _ int) {
		_, _ = io.WriteString(h, t)
		_, _ = io.WriteString(h, "\x00")
	})
	return fmt.Sprintf("lexis-%016x-%d", h.Sum64(), maxIndexedChars)
})

// segRef names one segment of a manifest.
type segRef struct {
	ID   string `json:"id"`
	Rows int    `json:"rows"`
	Docs int    `json:"docs"`
}

// fwdTerm is one term of a segment's file: its id in the segment's
// dictionary and its frequencies in body and name.
type fwdTerm struct {
	term       uint32
	body, name uint16
}

// fwdDoc is one file of a segment.
type fwdDoc struct {
	name             string // the file's name in its folder
	sum              uint64
	bodyLen, nameLen int32
	terms            []fwdTerm
}

// segment is a decoded segment: its term dictionary, files put and files
// deleted (names in the folder).
type segment struct {
	terms   []string
	docs    []fwdDoc
	deleted []string
}

// termRowsFolder is the folder of the persisted index of folder.
func termRowsFolder(folder string) string { return folder + TermSegment + "/" }

func manifestPath(folder string) string { return termRowsFolder(folder) + "manifest" }

func segRowPath(folder, id string, part int) string {
	return termRowsFolder(folder) + id + "-" + strconv.Itoa(part)
}

// isTermRow reports whether p is a row of a persisted term index:
// [folder/]TermSegment/name.
func isTermRow(p string) bool {
	dir, name := path.Split(p)
	parent, ok := strings.CutSuffix(dir, TermSegment+"/")
	if !ok || !rowpath.Valid(name) {
		return false
	}
	parent = strings.TrimSuffix(parent, "/")
	return parent == "" || rowpath.Valid(parent)
}

// encode returns seg in its binary form.
func (seg *segment) encode() []byte {
	var b []byte
	b = append(b, segMagic...)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(seg.terms)))
	for _, t := range seg.terms {
		str(t)
	}
	b = binary.AppendUvarint(b, uint64(len(seg.docs)))
	for _, d := range seg.docs {
		str(d.name)
		b = binary.LittleEndian.AppendUint64(b, d.sum)
		b = binary.AppendUvarint(b, uint64(d.bodyLen))
		b = binary.AppendUvarint(b, uint64(d.nameLen))
		b = binary.AppendUvarint(b, uint64(len(d.terms)))
		for _, t := range d.terms {
			b = binary.AppendUvarint(b, uint64(t.term))
			b = binary.AppendUvarint(b, uint64(t.body))
			b = binary.AppendUvarint(b, uint64(t.name))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(seg.deleted)))
	for _, name := range seg.deleted {
		str(name)
	}
	return b
}

// decodeSegment parses an encoded segment; anything malformed is
// errSegment.
func decodeSegment(b []byte) (*segment, error) {
	rest, ok := bytes.CutPrefix(b, []byte(segMagic))
	if !ok {
		return nil, errSegment
	}
	bad := false
	num := func(limit uint64) uint64 {
		v, n := binary.Uvarint(rest)
		if n <= 0 || v > limit {
			bad = true
			return 0
		}
		rest = rest[n:]
		return v
	}
	str := func() string {
		n := num(uint64(len(rest)))
		if bad || n > uint64(len(rest)) {
			bad = true
			return ""
		}
		s := string(rest[:n])
		rest = rest[n:]
		return s
	}
	seg := &segment{}
	nt := num(uint64(len(rest)))
	seg.terms = make([]string, 0, nt)
	for range nt {
		if seg.terms = append(seg.terms, str()); bad {
			return nil, errSegment
		}
	}
	nd := num(uint64(len(rest)))
	seg.docs = make([]fwdDoc, 0, nd)
	for range nd {
		d := fwdDoc{name: str()}
		if bad || len(rest) < 8 || !rowpath.ValidSegment(d.name) {
			return nil, errSegment
		}
		d.sum = binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		d.bodyLen, d.nameLen = int32(num(1<<31-1)), int32(num(1<<31-1))
		k := num(uint64(len(rest)))
		d.terms = make([]fwdTerm, 0, k)
		for range k {
			t := fwdTerm{term: uint32(num(uint64(len(seg.terms)) - 1)), body: uint16(num(maxTF)), name: uint16(num(maxTF))}
			d.terms = append(d.terms, t)
		}
		if bad || len(seg.terms) == 0 && k > 0 {
			return nil, errSegment
		}
		seg.docs = append(seg.docs, d)
	}
	ndel := num(uint64(len(rest)))
	for range ndel {
		if seg.deleted = append(seg.deleted, str()); bad || !rowpath.ValidSegment(seg.deleted[len(seg.deleted)-1]) {
			return nil, errSegment
		}
	}
	if bad || len(rest) != 0 {
		return nil, errSegment
	}
	return seg, nil
}
