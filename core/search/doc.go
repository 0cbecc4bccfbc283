// Package search is search over a store's files and the indexes that keep
// it fast: BM25 over the project's own analyzer (stemming, folding, CJK,
// related words), hybrid search that fuses it with the meaning of the
// files' chunks ([Embedder]), a term index per folder persisted as derived
// rows ([TermSegment]), the embedding indexer's chunk vectors
// ([IndexSegment]) and an in-memory vector cache for large folders.
//
// An application never builds an [Engine]: store.New does, over the
// store's driver, with the store as its [Host], and store.Store.Search
// validates a [Request] and hands it over. The store publishes every
// mutation that lands, once, to [Engine.Changed] (its change feed); the
// engine keeps its indexes from that feed and from what it finds changed
// behind the store's back, and its background work (writing segments,
// embedding) starts in [New] and stops, within one deadline, in
// [Engine.Close] (store.Store.Shutdown and Close).
//
// The types an application uses are here: [Request], [Result], [Match],
// [Mode] with [BM25], [Literal] and [Hybrid], [Embedder] and the
// fallbacks a result may report ([FallbackBuilding], [FallbackLiteral],
// [FallbackVectors]). docs/search.md describes the index per backend, how
// it scales, and the figures.
package search
