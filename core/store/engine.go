// The search engine's seam: what search keeps of its own (the term index,
// the embedder's queue and vectors, the analysis cache) and what it reaches
// of the store (host), so that the store's side of search is its change
// feed (feed.go) and the few methods that delegate here.

package store

import (
	"context"
	"iter"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// host is what the search engine uses of the Store beyond the driver's
// primitives: its reads (batched where the driver batches, without
// derived rows), its logging and its observer.
type host interface {
	usable(ctx context.Context) error
	getFiles(ctx context.Context, paths []string) (map[string]*driver.File, error)
	list(ctx context.Context, prefix string, limit int, direct bool) ([]string, error)
	walk(ctx context.Context, prefix string, pageSize int, fn func(string) bool) error
	Walk(ctx context.Context, prefix string, pageSize int, opts ...ListOptions) iter.Seq2[string, error]
	warn(ctx context.Context, msg, opID, path string, err error)
	observe(ctx context.Context, info OperationInfo) (context.Context, observation)
}

// engine answers searches and keeps their indexes from the store's change
// feed. It reads rows through the driver d directly only for its own
// derived rows and the reads the host does not offer (a scope read).
type engine struct {
	h     host
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

// newEngine returns the engine of a store over d (nil: an engine whose
// every call fails as the host's usable says), with hybrid search when
// embedder is set; its background work starts here and stops in close.
func newEngine(h host, d driver.Driver, now func() time.Time, embedder Embedder) *engine {
	e := &engine{h: h, d: d, now: now, embedder: embedder}
	if embedder != nil {
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

func (s *engine) usable(ctx context.Context) error { return s.h.usable(ctx) }

func (s *engine) getFiles(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	return s.h.getFiles(ctx, paths)
}

func (s *engine) list(ctx context.Context, prefix string, limit int, direct bool) ([]string, error) {
	return s.h.list(ctx, prefix, limit, direct)
}

func (s *engine) walk(ctx context.Context, prefix string, pageSize int, fn func(string) bool) error {
	return s.h.walk(ctx, prefix, pageSize, fn)
}

// Walk is the host's [Store.Walk].
func (s *engine) Walk(ctx context.Context, prefix string, pageSize int, opts ...ListOptions) iter.Seq2[string, error] {
	return s.h.Walk(ctx, prefix, pageSize, opts...)
}

func (s *engine) warn(ctx context.Context, msg, opID, path string, err error) {
	s.h.warn(ctx, msg, opID, path, err)
}

func (s *engine) observe(ctx context.Context, info OperationInfo) (context.Context, observation) {
	return s.h.observe(ctx, info)
}

// close stops the engine's background work within ctx (nil: until
// deadline): the term index writes what it has not persisted, then the
// indexer finishes its queue, both within the one deadline. The error
// wraps ctx's when the indexer's queue was cut.
func (s *engine) close(ctx context.Context, deadline time.Time) error {
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
