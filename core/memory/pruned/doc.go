// Package pruned is the pruned-history pipeline that feeds a notebook
// ([memory.Memory]) from the conversation an agent framework cuts out of
// its model requests: a [Window] decides where a request is cut and hands
// each pruned item to an [AppendQueue], which appends it once, in order,
// in the background, to a series of files that rotates when one is full
// ([AppendSeries], [SeriesPath]: pruned.md, pruned_0002.md, …, with a
// retention, [RotateOptions]); [Consolidate] turns what was pruned into
// notes with a language model ([Model]), and a [Trigger] runs it in the
// background once enough was pruned. The adk and eino adapters'
// HistoryWindow is a Window; `agentmem consolidate` and the console run
// Consolidate.
//
// Everything here goes through the notebook's public API and its store:
// the pruned files are memory files of the user's scope (shown in the
// injected file list, reachable with read_memory and search_memory), and
// each consolidation edit is a write_memory call ([memory.Memory.Apply]).
//
// # Errors
//
// [ErrQueueClosed] and [ErrTriggerClosed] report work handed to a closed
// queue or trigger; [ErrRetention] a rotating append that landed while
// deleting old files of its series failed; [ErrNilModel],
// [ErrMalformedAnswer], [ErrInvalidEdits] and [ErrConsolidationState] a
// consolidation that wrote nothing. Background failures follow the
// notebook's [memory.Options.InjectionErrors].
//
// # Consistency
//
// Each pruned item's append carries an operation id derived from its path
// and key, so it lands once in the whole series, also across a restart or
// a boundary of the rotation (the store's receipts answer a replay
// wherever the original landed). A consolidation stores its validated
// edits with its checkpoint before writing the first, so a rerun after a
// crash, or a concurrent run, applies the same edits once and advances
// the checkpoint once; a concurrent edit by the user or the agent is
// never overwritten. Both respect a file's lifetime (its expiry and pin):
// retention never deletes a pinned file, consolidation never deletes or
// empties one and may give a file an expiry through its validated edits,
// and every write keeps a file's expiry and pin unless it names them.
//
// # Capabilities
//
// The pipeline needs nothing beyond [store.Store]: it appends atomically
// where the backend can ([store.Store.Append]) and otherwise by
// compare-and-swap.
package pruned
