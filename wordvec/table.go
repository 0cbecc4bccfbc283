package wordvec

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

//go:generate go run ./internal/gen -n 100000 -o table.bin -go table_digest.go

// tableData is the word-vector table written by internal/gen (layout in its
// encode function): a header, the words most frequent first, one float32
// scale per word, then dims int8 components per word.
//
//go:embed table.bin
var tableData []byte

const (
	dims          = 100
	formatVersion = 1
	headerLen     = 20
)

// table is a parsed view of tableData; it copies nothing but the index.
type table struct {
	n       int
	words   []byte   // the words section
	offsets []uint32 // word i is words[offsets[i]+1 : offsets[i]+1+words[offsets[i]]]
	scales  []byte   // n little-endian float32
	vectors []byte   // n × dims int8
	slots   []uint32 // open addressing: index+1 of the word hashed there, 0 = empty
	mask    uint64
	exp     expander // query expansion's norms and neighbours, made on first use
}

// loadTable parses the embedded table once per process.
var loadTable = sync.OnceValues(func() (*table, error) { return parseTable(tableData) })

var errCorrupt = errors.New("wordvec: the embedded table is damaged (regenerate it with go generate)")

func parseTable(data []byte) (*table, error) {
	if len(data) < headerLen || string(data[:4]) != "AGWV" {
		return nil, errCorrupt
	}
	le := binary.LittleEndian
	version, d, n, wordBytes := le.Uint32(data[4:]), le.Uint32(data[8:]), int(le.Uint32(data[12:])), int(le.Uint32(data[16:]))
	if version != formatVersion || d != dims {
		return nil, fmt.Errorf("%w: format %d with %d dimensions, want %d and %d", errCorrupt, version, d, formatVersion, dims)
	}
	if n <= 0 || int64(len(data)) != int64(headerLen)+int64(wordBytes)+int64(n)*(4+dims) {
		return nil, fmt.Errorf("%w: %d bytes do not hold %d words", errCorrupt, len(data), n)
	}
	t := &table{n: n, words: data[headerLen : headerLen+wordBytes]}
	t.scales = data[headerLen+wordBytes : headerLen+wordBytes+4*n]
	t.vectors = data[headerLen+wordBytes+4*n:]
	t.offsets = make([]uint32, n)
	size := uint64(1)
	for size < uint64(2*n) {
		size <<= 1
	}
	t.slots, t.mask = make([]uint32, size), size-1
	off := 0
	for i := range n {
		if off >= len(t.words) || off+1+int(t.words[off]) > len(t.words) {
			return nil, fmt.Errorf("%w: word %d runs past the words", errCorrupt, i)
		}
		t.offsets[i] = uint32(off)
		w := t.words[off+1 : off+1+int(t.words[off])]
		off += 1 + len(w)
		h := hash(w) & t.mask
		for t.slots[h] != 0 {
			if string(t.word(int(t.slots[h]-1))) == string(w) {
				return nil, fmt.Errorf("%w: word %q twice", errCorrupt, w)
			}
			h = (h + 1) & t.mask
		}
		t.slots[h] = uint32(i + 1)
	}
	if off != len(t.words) {
		return nil, fmt.Errorf("%w: words section is longer than its words", errCorrupt)
	}
	return t, nil
}

func (t *table) word(i int) []byte {
	off := t.offsets[i]
	return t.words[off+1 : off+1+uint32(t.words[off])]
}

// index returns word's rank (0 = most frequent) or -1.
func (t *table) index(word []byte) int {
	h := hash(word) & t.mask
	for {
		s := t.slots[h]
		if s == 0 {
			return -1
		}
		if string(t.word(int(s-1))) == string(word) {
			return int(s - 1)
		}
		h = (h + 1) & t.mask
	}
}

func (t *table) scale(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(t.scales[4*i:]))
}

func (t *table) vector(i int) []byte { return t.vectors[i*dims : (i+1)*dims] }

// hash is FNV-1a, 64 bits.
func hash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
