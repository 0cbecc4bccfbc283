package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// winkPackage builds a tarball shaped like the npm package, with the given
// words in order and vector i = (i, i, …, norm, i).
func winkPackage(t *testing.T, words []string) []byte {
	t.Helper()
	var js strings.Builder
	names, _ := json.Marshal(words)
	fmt.Fprintf(&js, `{"precision":8,"l2NormIndex":100,"wordIndex":101,"size":%d,"dimensions":100,"words":%s,"vectors":{`, len(words), names)
	for i, w := range words {
		if i > 0 {
			js.WriteByte(',')
		}
		v := make([]float64, dims+2)
		for k := range dims {
			v[k] = float64(i+1) / 10 * float64(k%7-3)
		}
		v[dims+1] = float64(i)
		vj, _ := json.Marshal(v)
		fmt.Fprintf(&js, "%q:%s", w, vj)
	}
	js.WriteString(`},"unkVector":[0]}`)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, body string }{{"package/LICENSE", "MIT"}, {jsonPath, js.String()}} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body))})
		tw.Write([]byte(f.body))
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

func TestReadPackageKeepsEligibleWordsInOrder(t *testing.T) {
	tgz := winkPackage(t, []string{"the", ",", "of", "1999", "new-york", "Cap", "don't", "cat", "h1n1", "dog"})
	words, vecs, err := readPackage(bytes.NewReader(tgz), 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(words, " "); got != "the of cat h1n1" {
		t.Fatalf("words %q, want the first four eligible in order", got)
	}
	if len(vecs) != 4 || len(vecs[2]) != dims || vecs[2][0] != float64(7+1)/10*float64(0%7-3) {
		t.Fatalf("vector of cat = %v, want the package's (without norm and index)", vecs[2][:3])
	}
	if _, _, err := readPackage(bytes.NewReader(tgz), 6); err == nil {
		t.Fatal("asking for more words than the package has succeeded")
	}
}

func TestEncodeIsDeterministicAndQuantizesPerVector(t *testing.T) {
	words, vecs, err := readPackage(bytes.NewReader(winkPackage(t, []string{"cat", "dog", "car"})), 3)
	if err != nil {
		t.Fatal(err)
	}
	a, stats := encode(words, vecs)
	b, _ := encode(words, vecs)
	if !bytes.Equal(a, b) {
		t.Fatal("encode gave different bytes for the same input")
	}
	if stats.minCos < 0.9999 {
		t.Fatalf("quantized vectors lost direction: min cosine %v", stats.minCos)
	}
	wantLen := 20 + (1+3)*3 + 3*(4+dims)
	if len(a) != wantLen || string(a[:4]) != "AGWV" {
		t.Fatalf("table is %d bytes starting %q, want %d starting AGWV", len(a), a[:4], wantLen)
	}
	// Each vector's largest component maps to ±127.
	q := a[len(a)-dims:]
	maxAbs := 0
	for _, c := range q {
		maxAbs = max(maxAbs, abs(int(int8(c))))
	}
	if maxAbs != 127 {
		t.Fatalf("largest quantized component %d, want 127", maxAbs)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestVerifyChecksIntegrity(t *testing.T) {
	data := []byte("package bytes")
	sum := sha512.Sum512(data)
	good := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	if err := verify(data, good); err != nil {
		t.Fatal(err)
	}
	if err := verify(append(data, '!'), good); err == nil {
		t.Fatal("a changed tarball passed verification")
	}
	if err := verify(data, "sha1-abc"); err == nil {
		t.Fatal("a non-sha512 integrity string was accepted")
	}
}
