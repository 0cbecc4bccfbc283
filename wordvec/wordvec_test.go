package wordvec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func newEmbedder(t testing.TB) *Embedder {
	t.Helper()
	e, err := New(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func similarity(t *testing.T, e *Embedder, a, b string) float32 {
	t.Helper()
	v, err := e.Embed(t.Context(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	return dot(v[0], v[1])
}

func TestTableMatchesDigest(t *testing.T) {
	sum := sha256.Sum256(tableData)
	if got := hex.EncodeToString(sum[:]); got != tableSHA256 {
		t.Fatalf("table.bin has SHA-256 %s, the generator recorded %s: run go generate", got, tableSHA256)
	}
	tbl, err := loadTable()
	if err != nil {
		t.Fatal(err)
	}
	if tbl.n != tableWords {
		t.Fatalf("table holds %d words, the generator recorded %d", tbl.n, tableWords)
	}
	if got, want := newEmbedder(t).Model(), "wordvec/glove-6b-100d-100k-int8@1"; got != want {
		t.Fatalf("Model() = %q, want %q", got, want)
	}
	// Most frequent first: GloVe's order.
	if tbl.index([]byte("the")) != 0 || tbl.index([]byte("of")) >= tbl.index([]byte("cat")) {
		t.Fatalf("words are not in frequency order: the=%d of=%d cat=%d",
			tbl.index([]byte("the")), tbl.index([]byte("of")), tbl.index([]byte("cat")))
	}
}

func TestNearestNeighbours(t *testing.T) {
	e := newEmbedder(t)
	for _, c := range []struct{ word, near, far string }{
		{"cat", "dog", "car"},
		{"flight", "plane", "banana"},
		{"car", "automobile", "potato"},
		{"doctor", "physician", "guitar"},
		{"lisbon", "portugal", "keyboard"},
	} {
		near, far := similarity(t, e, c.word, c.near), similarity(t, e, c.word, c.far)
		if near <= far {
			t.Errorf("cos(%s, %s) = %.3f is not above cos(%s, %s) = %.3f", c.word, c.near, near, c.word, c.far, far)
		}
	}
	// Among a handful of candidates, "plane" is the nearest to "flight".
	cands := []string{"plane", "banana", "river", "tax", "sing", "green"}
	v, err := e.Embed(t.Context(), append([]string{"flight"}, cands...))
	if err != nil {
		t.Fatal(err)
	}
	best := 1
	for i := 2; i < len(v); i++ {
		if dot(v[0], v[i]) > dot(v[0], v[best]) {
			best = i
		}
	}
	if cands[best-1] != "plane" {
		t.Errorf("nearest to flight is %q, want plane", cands[best-1])
	}
}

func TestParaphrasesRankAboveUnrelated(t *testing.T) {
	e := newEmbedder(t)
	for _, c := range []struct{ text, paraphrase, unrelated string }{
		{"The cat rested on the carpet.", "A kitten slept on the rug.", "The desk was in the study room."},
		{"She owns no car and takes the tram to work.", "He commutes by public transport; no automobile.", "Her favourite dish is grilled fish."},
		{"What time does the flight leave?", "When does the plane depart?", "How much does the apartment cost?"},
		{"The boiler is serviced every October.", "Annual maintenance of the heating system in autumn.", "She paints watercolours at weekends."},
	} {
		p, u := similarity(t, e, c.text, c.paraphrase), similarity(t, e, c.text, c.unrelated)
		if p <= u {
			t.Errorf("%q: paraphrase %.3f is not above unrelated %.3f", c.text, p, u)
		}
	}
}

func TestEmbedShape(t *testing.T) {
	e := newEmbedder(t)
	texts := []string{"Lives in Lisbon.", "", "!!! ... ???", "12 345", "日本語", "Bouldering three evenings a week."}
	v, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(v), len(texts))
	}
	for i, x := range v {
		if len(x) != Dimensions || e.Dimensions() != Dimensions {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(x), Dimensions)
		}
		n := dot(x, x)
		zero := i >= 1 && i <= 4
		if zero && n != 0 {
			t.Errorf("%q: want the zero vector, norm² %v", texts[i], n)
		}
		if !zero && math.Abs(float64(n)-1) > 1e-5 {
			t.Errorf("%q: norm² %v, want 1", texts[i], n)
		}
	}
	// Appending to one vector never runs into the next.
	v[0] = append(v[0], 1)
	if v[1][0] != 0 {
		t.Fatal("vectors share their backing array beyond their length")
	}
	if v, err := e.Embed(t.Context(), nil); err != nil || len(v) != 0 {
		t.Fatalf("Embed(nil) = %v, %v; want no vectors, no error", v, err)
	}
}

func TestEmbedIsDeterministicAndBatchIndependent(t *testing.T) {
	e := newEmbedder(t)
	texts := []string{"Prefers trains to planes for trips under six hours.", "Dog called Bolacha, a beagle.", ""}
	batch, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		one, err := e.Embed(t.Context(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one[0], batch[i]) {
			t.Errorf("%q embeds differently alone and in a batch", text)
		}
	}
}

func TestConcurrentEmbed(t *testing.T) {
	e := newEmbedder(t)
	texts := []string{"cats and dogs", "the flight was delayed", "mortgage payment", "German class on Thursdays"}
	want, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			other, err := New(t.Context(), nil)
			if err != nil {
				errs <- err
				return
			}
			for range 50 {
				emb := e
				if g%2 == 1 {
					emb = other
				}
				got, err := emb.Embed(t.Context(), texts)
				if err != nil {
					errs <- err
					return
				}
				for i := range got {
					if !slices.Equal(got[i], want[i]) {
						errs <- errors.New("concurrent Embed returned a different vector")
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// countdownCtx is done after its Err has been asked n times.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

func TestEmbedHonoursCancellation(t *testing.T) {
	e := newEmbedder(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if v, err := e.Embed(ctx, []string{"cat"}); !errors.Is(err, context.Canceled) || v != nil {
		t.Fatalf("Embed with a cancelled ctx = %v, %v; want context.Canceled", v, err)
	}
	if _, err := New(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("New with a cancelled ctx: %v, want context.Canceled", err)
	}
	// Cancelled in the middle of a large batch: stops and returns ctx's error.
	batch := make([]string, 10000)
	for i := range batch {
		batch[i] = "a note about a cat and a dog"
	}
	c := &countdownCtx{Context: t.Context(), n: 100}
	if v, err := e.Embed(c, batch); !errors.Is(err, context.Canceled) || v != nil {
		t.Fatalf("Embed cancelled mid-batch = %d vectors, %v; want context.Canceled", len(v), err)
	}
	if c.n != 0 {
		t.Fatalf("Embed went on after ctx was done (%d checks left)", c.n)
	}
}

func TestNewOptions(t *testing.T) {
	//lint:ignore SA1012 a nil context is what is tested
	if _, err := New(nil, nil); !errors.Is(err, ErrNilContext) { //nolint:staticcheck
		t.Fatal("New(nil ctx) succeeded")
	}
	if _, err := New(t.Context(), &Options{Weighting: 7}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("unknown Weighting: %v, want ErrInvalidOptions", err)
	}
	u, err := New(t.Context(), &Options{Weighting: WeightUniform})
	if err != nil {
		t.Fatal(err)
	}
	s := newEmbedder(t)
	if u.Model() == s.Model() {
		t.Fatalf("uniform and SIF weighting share the model id %q", u.Model())
	}
	a, _ := u.Embed(t.Context(), []string{"what did the cat eat"})
	b, _ := s.Embed(t.Context(), []string{"what did the cat eat"})
	if slices.Equal(a[0], b[0]) {
		t.Fatal("the weightings give the same vector")
	}
	// SIF weights frequent words down: "cat" dominates more than uniformly.
	c, _ := s.Embed(t.Context(), []string{"cat"})
	if dot(b[0], c[0]) <= dot(a[0], c[0]) {
		t.Fatalf("SIF similarity to cat %.3f is not above uniform %.3f", dot(b[0], c[0]), dot(a[0], c[0]))
	}
	//lint:ignore SA1012 a nil context is what is tested
	if _, err := s.Embed(nil, []string{"x"}); !errors.Is(err, ErrNilContext) { //nolint:staticcheck
		t.Fatal("Embed(nil ctx) succeeded")
	}
}

func TestTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Hello, World!", "hello world"},
		{"Don't stop; we can't, won't.", "do not stop we can not will not"},
		{"Tiago's school, she'll go; they're here", "tiago school she go they here"},
		{"Belém Médis façades naïve STRAßE Æther", "belem medis facades naive strasse aether"},
		{"Bele\u0301m", "belem"},
		{"diesel-powered 10:30 6pm", "diesel powered 10 30 6pm"},
		{"Москва 東京", "москва 東京"},
		{"o'brien rock'n'roll", "o brien rock n roll"},
		{"  ", ""},
	} {
		var got []string
		tokens(c.in, nil, func(w []byte) { got = append(got, string(w)) })
		if strings.Join(got, " ") != c.want {
			t.Errorf("tokens(%q) = %q, want %q", c.in, strings.Join(got, " "), c.want)
		}
	}
}

// buildTable lays out a table as internal/gen does, with vector i all
// zeros but component i = 1.
func buildTable(words []string) []byte {
	var b bytes.Buffer
	n := 0
	for _, w := range words {
		n += 1 + len(w)
	}
	b.WriteString("AGWV")
	for _, v := range []uint32{formatVersion, dims, uint32(len(words)), uint32(n)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	for _, w := range words {
		b.WriteByte(byte(len(w)))
		b.WriteString(w)
	}
	for range words {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(1.0/127))
	}
	for i := range words {
		v := make([]byte, dims)
		v[i%dims] = 127
		b.Write(v)
	}
	return b.Bytes()
}

func TestLookupFallbacks(t *testing.T) {
	tbl, err := parseTable(buildTable([]string{"berry", "run", "bake", "walk", "box", "class", "stop", "carry", "go"}))
	if err != nil {
		t.Fatal(err)
	}
	var scratch []byte
	for _, c := range []struct{ word, want string }{
		{"berry", "berry"}, {"berries", "berry"}, {"walks", "walk"}, {"boxes", "box"},
		{"running", "run"}, {"baking", "bake"}, {"walking", "walk"}, {"baked", "bake"},
		{"walked", "walk"}, {"stopped", "stop"}, {"carried", "carry"}, {"stopping", "stop"},
		{"class", "class"}, {"classes", "class"}, {"goes", "go"},
		{"sing", ""}, {"red", ""}, {"bus", ""}, {"zebra", ""},
	} {
		i := tbl.lookup([]byte(c.word), &scratch)
		got := ""
		if i >= 0 {
			got = string(tbl.word(i))
		}
		if got != c.want {
			t.Errorf("lookup(%q) found %q, want %q", c.word, got, c.want)
		}
	}
}

func TestParseTableRejectsDamage(t *testing.T) {
	good := buildTable([]string{"cat", "dog"})
	if _, err := parseTable(good); err != nil {
		t.Fatal(err)
	}
	dup := buildTable([]string{"cat", "cat"})
	long := buildTable([]string{"cat", "dog"})
	long[20] = 200 // first word's length runs past the words
	badVersion := bytes.Clone(good)
	badVersion[4] = 9
	for name, data := range map[string][]byte{
		"empty": nil, "magic": append([]byte("XXXX"), good[4:]...), "truncated": good[:len(good)-1],
		"duplicate": dup, "word length": long, "version": badVersion,
	} {
		if _, err := parseTable(data); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: parseTable = %v, want errCorrupt", name, err)
		}
	}
}
