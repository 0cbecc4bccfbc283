// Command agentmem reads, writes, moves and erases agentmem memory files in any
// store that a URL names, from a terminal or a script.
//
//	go install ./cmd/agentmem      # from a clone, or make install
//	go install github.com/agentmem/agentmem/cmd/agentmem@latest   # once released
//
//	agentmem ls kamal/                      # every path under a prefix; -l adds pin and expiry
//	agentmem cat -v kamal/main/MEMORY.md    # content; -v adds version and metadata
//	agentmem edit kamal/main/MEMORY.md      # $VISUAL/$EDITOR, written back with compare-and-swap
//	agentmem put --expires 7d kamal/main/trip.md < trip.md  # a note that expires (--pin: never)
//	agentmem prune                          # expired files deleted (and recorded), expired rows removed
//	agentmem migrate sqlite:.agent-memory.db postgres://app@db/agents
//	agentmem log kamal/main/MEMORY.md       # recorded changes (store URL with ?history=30d)
//	agentmem diff kamal/main/MEMORY.md      # the last change, as a unified diff
//	agentmem restore kamal/main/MEMORY.md V # a past version written back, exactly once
//	agentmem consolidate --model anthropic:claude-sonnet-4-5 kamal  # pruned history into notes
//	agentmem search --json kamal/main/ tea  # what the notebook's search_memory returns
//	agentmem reindex kamal/                 # the search index rebuilt after a model change
//
// The store is --store URL, else $AGENTMEM_STORE, else
// sqlite:.agent-memory.db (the quickstart's file). Every backend is compiled
// in, so every scheme of store.Open works: mem:, file:, sqlite:, postgres:,
// postgresql:, dynamodb:, firestore:, cosmosdb:. Search is hybrid (BM25
// fused with chunk vectors) with the embedder of the URL's embedder=
// parameter, else --embedder, else $AGENTMEM_EMBEDDER, else wordvec (offline
// word vectors compiled in); every embedder of store.OpenEmbedder is
// compiled in too (wordvec, openai:, ollama:, gemini:, voyage:), and none
// turns it off. Writes index what they change before the command exits.
//
// Nothing is overwritten blindly: put creates only, unless given the version
// it replaces (--if-version) or --force; edit, rm, import, migrate and forget
// write and delete with compare-and-swap on the version they read.
//
// A store opened with the URL parameter history (?history=on, ?history=720h,
// ?history=30d: the retention) records every change: log lists a file's
// changes or a namespace's (--prefix, --user), diff compares two versions,
// restore writes a past version back (recorded too, with restored_from), and
// forget erases a namespace's history after its files.
//
// A file can expire (put --expires) or be pinned (put --pin): an expired
// file is hidden from every command at once, recorded in the history as a
// delete by agentmem-expiry (log's kind expire), restorable, and deleted by
// prune. Every command that writes an existing file without naming its
// expiry or pin keeps them (put --force and --if-version, edit; migrate
// copies them).
//
// # Exit codes
//
//	0  success
//	1  error: the store failed or could not be reached, an interrupted run
//	2  usage or invalid input: a bad flag or argument, a malformed store URL
//	   or unknown scheme, an invalid path, version, metadata, expiry or bound, a path below a
//	   file, content too large, a damaged archive, a confirmation that was
//	   not given
//	3  conflict: the file's version is not the one expected (it changed, or
//	   exists already), or an operation id was reused with other arguments;
//	   nothing was written
//	4  not found: no file at the path, no such version, no recorded change,
//	   no store (commands that only read never create one)
//
// diff exits as diff(1): 0 when the versions are equal, 1 when they differ;
// its failures keep the codes above (a store error is also 1, but with a
// message on stderr and nothing on stdout).
//
// Errors are one line on stderr, "agentmem: …", saying what to fix; none
// repeats a URL's password or query.
package main

import "os"

func main() { os.Exit(Main()) }
