package store_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// fakeEmbedder is a registered test embedder: one dimension per letter.
type fakeEmbedder struct{ model string }

func (e fakeEmbedder) Model() string { return e.model }
func (e fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 26)
		for _, r := range strings.ToLower(t) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		v[0]++ // never the zero vector
		out[i] = v
	}
	return out, nil
}

var errNoKey = errors.New("fake: key missing")

func init() {
	store.RegisterEmbedder("test-fake", func(_ context.Context, model string) (search.Embedder, error) {
		switch model {
		case "nokey":
			return nil, errNoKey
		case "":
			model = "default"
		}
		return fakeEmbedder{"test-fake:" + model}, nil
	})
}

// TestOpenEmbedderParam: embedder= turns hybrid on with the registered
// embedder (the model after the colon), never reaches the backend, and
// replaces Options.Embedder; embedder=none turns it off.
func TestOpenEmbedderParam(t *testing.T) {
	var got url.Values
	store.Register("embparam", func(_ context.Context, u *url.URL) (driver.Driver, error) {
		got = u.Query()
		return histDriver{}, nil
	})
	def := &store.Options{Embedder: fakeEmbedder{"program-default"}}
	for _, c := range []struct {
		raw  string
		opts *store.Options
		want string // the model, "" for none
	}{
		{"embparam://?embedder=test-fake", nil, "test-fake:default"},
		{"embparam://?embedder=TEST-FAKE:small@8&x=1", nil, "test-fake:small@8"},
		{"embparam://?embedder=test-fake:big", def, "test-fake:big"},
		{"embparam://?embedder=none", def, ""},
		{"embparam://?embedder=none&history=on", nil, ""},
		{"embparam://?x=1", def, "program-default"},
		{"embparam://", nil, ""},
	} {
		s, err := store.Open(t.Context(), c.raw, c.opts)
		if err != nil {
			t.Fatalf("Open(%q): %v", c.raw, err)
		}
		if got.Has(store.EmbedderParam) {
			t.Errorf("Open(%q) passed %q to the backend", c.raw, store.EmbedderParam)
		}
		model := ""
		if e := s.Embedder(); e != nil {
			model = e.Model()
		}
		if model != c.want {
			t.Errorf("Open(%q).Embedder() = %q, want %q", c.raw, model, c.want)
		}
		s.Close()
	}
	if def.Embedder.Model() != "program-default" {
		t.Error("Open changed the caller's Options")
	}
}

// TestOpenEmbedderParamErrors: an unknown embedder names the import that
// adds it (as an unknown scheme does), a malformed or repeated value is
// ErrInvalidURL, and the opener's own error stays in the chain.
func TestOpenEmbedderParamErrors(t *testing.T) {
	for raw, want := range map[string]string{
		"mem://?embedder=wordvec":         `add import _ "github.com/agentmem/agentmem/wordvec"`,
		"mem://?embedder=openai:text-3":   `add import _ "github.com/agentmem/agentmem/embedapi"`,
		"mem://?embedder=voyage:voyage-3": `add import _ "github.com/agentmem/agentmem/embedapi"`,
		"mem://?embedder=nosuch":          `no embedder is registered as "nosuch" (registered: test-fake`,
		"mem://?embedder=":                "name an embedder",
		"mem://?embedder=none:x":          "name an embedder",
		"mem://?embedder=test-fake:":      "name the model after the colon",
		"mem://?embedder=a&embedder=b":    `parameter "embedder" is given 2 times`,
		"mem://?embedder=wordvec&t=%zz":   "the query does not parse",
	} {
		s, err := store.Open(t.Context(), raw, nil)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, store.ErrInvalidURL) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL saying %q", raw, err, want)
		}
		// Only a name nobody registered is ErrUnknownEmbedder.
		unknown := strings.Contains(want, "import _") || strings.Contains(want, "no embedder is registered")
		if errors.Is(err, store.ErrUnknownEmbedder) != unknown {
			t.Errorf("Open(%q) = %v: errors.Is(ErrUnknownEmbedder) = %v, want %v", raw, err, !unknown, unknown)
		}
		if errors.Is(err, store.ErrUnknownScheme) {
			t.Errorf("Open(%q) = %v: an embedder's error matches ErrUnknownScheme", raw, err)
		}
	}
	_, err := store.Open(t.Context(), "mem://?embedder=test-fake:nokey", nil)
	if !errors.Is(err, errNoKey) || !strings.Contains(err.Error(), "embedder=test-fake") {
		t.Errorf("an opener's failure = %v, want it wrapped, naming the embedder", err)
	}
}

// TestCheckQueryNamesEmbedder: a misspelt parameter's error lists the
// store's own parameters, embedder among them.
func TestCheckQueryNamesEmbedder(t *testing.T) {
	for _, known := range [][]string{{"table"}, nil} {
		u, _ := url.Parse("sqlite:x.db?embeder=wordvec")
		err := driver.CheckQuery(u, known...)
		if !errors.Is(err, store.ErrInvalidURL) || !strings.Contains(err.Error(), store.EmbedderParam) || !strings.Contains(err.Error(), store.HistoryParam) {
			t.Errorf("CheckQuery(%v) = %v, want history and embedder listed", known, err)
		}
	}
}

// TestOpenEmbedder: the spec syntax outside a URL, for flags and
// environment variables.
func TestOpenEmbedder(t *testing.T) {
	e, err := store.OpenEmbedder(t.Context(), " test-fake:m ")
	if err != nil || e.Model() != "test-fake:m" {
		t.Fatalf("OpenEmbedder = %v, %v", e, err)
	}
	if e, err := store.OpenEmbedder(t.Context(), "none"); e != nil || err != nil {
		t.Errorf("OpenEmbedder(none) = %v, %v; want nil, nil", e, err)
	}
	if _, err := store.OpenEmbedder(nil, "test-fake"); err == nil { //nolint:staticcheck // a nil context is refused
		t.Error("OpenEmbedder accepted a nil context")
	}
	if got := store.Embedders(); len(got) == 0 || !strings.Contains(strings.Join(got, ","), "test-fake") {
		t.Errorf("Embedders() = %v", got)
	}
}

// TestRegisterEmbedderPanics: programming errors are found at start-up.
func TestRegisterEmbedderPanics(t *testing.T) {
	open := func(context.Context, string) (search.Embedder, error) { return fakeEmbedder{}, nil }
	for name, f := range map[string]func(){
		"empty":     func() { store.RegisterEmbedder("", open) },
		"none":      func() { store.RegisterEmbedder("none", open) },
		"bad":       func() { store.RegisterEmbedder("a b", open) },
		"nil":       func() { store.RegisterEmbedder("test-nil", nil) },
		"duplicate": func() { store.RegisterEmbedder("test-fake", open) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterEmbedder %s did not panic", name)
				}
			}()
			f()
		}()
	}
}
