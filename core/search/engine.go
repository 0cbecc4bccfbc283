// The engine: what search keeps of its own (the term index, the embedder's
// queue and vectors, the analysis cache) and what it reaches of the store
// it indexes (Host).

package search

import (
	"context"
	"iter"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// Host is what an [Engine] uses of the store whose files it indexes,
// beyond the driver's primitives: the store's reads (batched where the
// driver batches, never yielding derived rows), its logging and its
// observer. The store (store.New) makes the engine and is its host;
// methods are called concurrently, from searches and from the engine's
// background work.
type Host interface {
	// Usable reports why the store cannot serve a call now (no driver,
	// ctx done).
	Usable(ctx context.Context) error
	// GetFiles reads the files at paths (missing ones are absent).
	GetFiles(ctx context.Context, paths []string) (map[string]*driver.File, error)
	// List returns at most limit paths under prefix, in order; direct
	// keeps only those directly under it.
	List(ctx context.Context, prefix string, limit int, direct bool) ([]string, error)
	// Walk yields every path under prefix, in order.
	Walk(ctx context.Context, prefix string) iter.Seq2[string, error]
	// Warn logs a failure the engine swallows by design (path may be a
	// file or a folder).
	Warn(ctx context.Context, msg, path string, err error)
	// Observe tells the store's observer that op ([OpSearch], [OpIndex])
	// begins, and returns the context to run it under and the function
	// that tells it ended (its error, and how many items it covered).
	Observe(ctx context.Context, op string) (context.Context, func(err error, n int))
}

// The operations an Engine tells its Host's Observe of.
const (
	// OpSearch is one search.
	OpSearch = "Search"
	// OpIndex is the engine's own background work: one job of the
	// embedding indexer, or the term index's work on a folder.
	OpIndex = "Index"
)

const (
	opSearch = OpSearch
	opIndex  = OpIndex
)

// pageSize is how many derived rows the engine lists at a time.
const pageSize = 500

// Options configures an [Engine]. The zero value (or nil) means defaults.
type Options struct {
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Embedder, when set, turns on hybrid search and the background
	// indexer that keeps the files' chunk vectors.
	Embedder Embedder
}

// Engine answers searches and keeps their indexes from the store's change
// feed ([Engine.Changed]). It reads rows through the driver directly only
// for its own derived rows ([TermSegment], [IndexSegment]) and for scope
// reads. Its background work starts in [New] and stops in [Engine.Close].
type Engine struct {
	h     Host
	d     driver.Driver
	batch driver.BatchGetter
	scope driver.ScopeReader
	now   func() time.Time

	embedder Embedder
	ix       *indexer
	cache    analysisCache // searches' analysis of what they read
	terms    *termIndex    // folders' term indexes, kept by the change feed
	vecs     *vecIndex     // large folders' chunk vectors, kept by the indexer
}

// New returns the engine of the store h over d (nil: an engine whose every
// call fails as h's Usable says), with hybrid search when opts has an
// embedder; its background work starts here and stops in Close.
func New(h Host, d driver.Driver, opts *Options) *Engine {
	e := &Engine{h: h, d: d, now: time.Now}
	if opts != nil {
		if opts.Now != nil {
			e.now = opts.Now
		}
		e.embedder = opts.Embedder
	}
	if e.embedder != nil {
		e.ix = newIndexer()
	}
	if d == nil {
		return e
	}
	c := driver.CapabilitiesOf(d)
	if c.BatchGet {
		e.batch = d.(driver.BatchGetter)
	}
	if c.ScopeRead {
		e.scope = d.(driver.ScopeReader)
	}
	e.terms = newTermIndex(e)
	if e.ix != nil {
		e.vecs = &vecIndex{s: e, folders: map[string]*folderVecs{}}
		e.ix.bg.Go(e.indexWorker)
	}
	return e
}

// Embedder returns the engine's embedder, nil when hybrid search is off.
func (s *Engine) Embedder() Embedder { return s.embedder }

// Changed is the store's change feed: the file at p changed, once per
// mutation that landed (landed), or may have (a backend error left the
// outcome unknown: the indexes look at the file again). ctx, the
// mutation's, only links the background work it starts.
func (s *Engine) Changed(ctx context.Context, p string, landed bool) {
	if landed {
		s.indexAfter(ctx, p)
	}
	if s.terms != nil {
		s.terms.changed(p)
	}
}

// observation ends what observe began.
type observation func(err error, n int)

func (o observation) done(err error, _ bool, n int) { o(err, n) }

func (s *Engine) observe(ctx context.Context, op string) (context.Context, observation) {
	ctx, end := s.h.Observe(ctx, op)
	return ctx, end
}

func (s *Engine) usable(ctx context.Context) error { return s.h.Usable(ctx) }

func (s *Engine) getFiles(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	return s.h.GetFiles(ctx, paths)
}

func (s *Engine) list(ctx context.Context, prefix string, limit int, direct bool) ([]string, error) {
	return s.h.List(ctx, prefix, limit, direct)
}

func (s *Engine) warn(ctx context.Context, msg, _, path string, err error) {
	s.h.Warn(ctx, msg, path, err)
}

// Close stops the engine's background work within ctx (nil: until
// deadline): the term index writes what it has not persisted, then the
// indexer finishes its queue, both within the one deadline. The error
// wraps ctx's when the indexer's queue was cut.
func (s *Engine) Close(ctx context.Context, deadline time.Time) error {
	if s.terms == nil {
		return nil
	}
	fctx, cancel := ctx, context.CancelFunc(func() {})
	if fctx == nil {
		fctx, cancel = context.WithDeadline(context.Background(), deadline)
	}
	// At the deadline the background flushes are cut too, so none holds
	// the index's lock past it.
	stop := context.AfterFunc(fctx, s.terms.bg.Close)
	s.terms.flushAll(fctx) // what the next process loads (it finds the rest by checking)
	stop()
	cancel()
	s.terms.close()
	return s.stopIndexer(ctx, deadline)
}
