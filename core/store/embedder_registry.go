// The embedder registry: names for OpenEmbedder and the embedder URL parameter.

package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentmem/agentmem/core/driver"

	"github.com/agentmem/agentmem/core/search"
)

// EmbedderParam is the store URL parameter, understood by [Open] on every
// backend, that names the embedder of hybrid search (Options.Embedder):
// "wordvec" (the offline embedder), "openai:MODEL", "ollama:MODEL",
// "gemini:MODEL", "voyage:MODEL" (keys from each provider's usual
// environment variable), or "none" for no embedder. The name before the
// first colon picks an opener registered with [RegisterEmbedder]; the
// rest is the model, given to it as is. In the URL it replaces
// Options.Embedder, "none" included: a program sets Options.Embedder as
// its default and the operator's URL overrides it.
const EmbedderParam = driver.EmbedderParam

// NoEmbedder is the [EmbedderParam] value that turns hybrid search off.
const NoEmbedder = "none"

// EmbedderOpener returns the embedder of one model of a registered
// embedder name: model is what follows "NAME:" in the spec ("" for a bare
// "wordvec"). It reports a model or an option it does not know with an
// error wrapping [ErrInvalidURL], as a [URLOpener] does; other failures (a
// missing API key) are its own errors.
type EmbedderOpener func(ctx context.Context, model string) (search.Embedder, error)

// embedders are the registered embedder names ("none" is reserved). known
// maps each name agentmem's own modules register to the package whose
// import registers it, so that an unknown-embedder error can say which
// import is missing.
var embedders = registry[EmbedderOpener]{fn: "RegisterEmbedder", what: "embedder", reserved: NoEmbedder, known: map[string]string{
	"wordvec": "github.com/agentmem/agentmem/wordvec",
	"openai":  "github.com/agentmem/agentmem/embedapi",
	"ollama":  "github.com/agentmem/agentmem/embedapi",
	"gemini":  "github.com/agentmem/agentmem/embedapi",
	"voyage":  "github.com/agentmem/agentmem/embedapi",
}}

// RegisterEmbedder makes open the opener of embedder specs named name
// (such as "wordvec" or "openai"; compared case-insensitively), for
// [EmbedderParam] and [OpenEmbedder]. Embedder packages call it from an
// init function, so that a blank import adds the name, as store backends
// do with [Register]. It is safe for concurrent use. It panics when name
// is empty, not a valid URL scheme, or "none", when open is nil, or when
// name is registered already: each is a programming error found the first
// time the program starts.
func RegisterEmbedder(name string, open EmbedderOpener) { embedders.add(name, open, open == nil) }

// Embedders returns the registered embedder names, sorted.
func Embedders() []string { return embedders.names() }

// OpenEmbedder returns the embedder that spec names, in the syntax of
// [EmbedderParam]: "NAME" or "NAME:MODEL". For "none" it returns nil and
// no error (no embedder). It fails with [ErrInvalidURL] for an empty or
// malformed spec and for a name no imported package registered (the error
// names the import that adds it); an opener's own failure (an unknown
// model, a missing API key) is wrapped, so errors.Is finds its sentinel.
func OpenEmbedder(ctx context.Context, spec string) (search.Embedder, error) {
	if ctx == nil {
		return nil, fmt.Errorf("agentmem: pass a context to OpenEmbedder, not nil: %w", ErrNilArgument)
	}
	name, model, open, err := lookupEmbedder(spec)
	if err != nil || open == nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := open(ctx, model)
	if err != nil {
		return nil, fmt.Errorf("agentmem: %s=%s: %w", EmbedderParam, name, err)
	}
	if e == nil {
		return nil, fmt.Errorf("agentmem: the opener of embedder %q returned no embedder", name)
	}
	return e, nil
}

// lookupEmbedder splits spec and finds its opener: a nil opener and no
// error for "none".
func lookupEmbedder(spec string) (name, model string, open EmbedderOpener, err error) {
	name, model, hasModel := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.ToLower(name)
	switch {
	case name == NoEmbedder && !hasModel:
		return name, "", nil, nil
	case name == "" || !validScheme(name) || name == NoEmbedder:
		return "", "", nil, fmt.Errorf("%w: %s=%q: name an embedder: wordvec, openai:MODEL, ollama:MODEL, gemini:MODEL, voyage:MODEL or none", ErrInvalidURL, EmbedderParam, spec)
	case hasModel && model == "":
		return "", "", nil, fmt.Errorf("%w: %s=%s: name the model after the colon (%s:MODEL)", ErrInvalidURL, EmbedderParam, name, name)
	}
	open, ok := embedders.get(name)
	if !ok {
		return "", "", nil, unknownEmbedder(name)
	}
	return name, model, open, nil
}

// unknownEmbedder reports an embedder name that no imported package
// registered.
func unknownEmbedder(name string) error {
	pkg, ok, registered := embedders.missing(name)
	msg := fmt.Sprintf("%v: no embedder is registered as %q (registered: %s; or %s=none)", ErrInvalidURL, name, registered, EmbedderParam)
	if ok {
		msg = fmt.Sprintf("%v: no embedder is registered as %q: add import _ %q (registered: %s)", ErrInvalidURL, name, pkg, registered)
	}
	return &detailed{msg: msg, errs: []error{ErrUnknownEmbedder, ErrInvalidURL}}
}

// embedderParam takes EmbedderParam off q: whether the URL gives it, and
// the embedder it names (nil for "none").
func embedderParam(ctx context.Context, u *url.URL, q url.Values) (bool, search.Embedder, error) {
	vals, ok := q[EmbedderParam]
	if !ok {
		return false, nil, nil
	}
	if len(vals) > 1 {
		return false, nil, driver.URLError(u, "parameter %q is given %d times", EmbedderParam, len(vals))
	}
	q.Del(EmbedderParam)
	e, err := OpenEmbedder(ctx, vals[0])
	if err != nil {
		return false, nil, err
	}
	return true, e, nil
}

// Embedder returns the store's embedder ([Options.Embedder], or the one
// the URL named), nil when hybrid search is off.
func (s *Store) Embedder() search.Embedder { return s.search.Embedder() }
