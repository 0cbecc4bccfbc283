// Questions about things no note mentions: search must answer them with
// no match, in every mode.

package retrieval

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentmem/agentmem/core/memory"
)

// AbsentKind is the Kind of the queries [WithAbsent] adds. They count in
// their own group of a [Report] (their NoMatch), never in "all".
const AbsentKind = "absent"

// Absent are questions a user might ask about things the project's sets
// never mention. [WithAbsent] adds them to every namespace of a set; a
// run keeps, per namespace, those that no note shares a word with (BM25
// finds nothing), so that each one is about something that user never
// wrote down.
var Absent = []string{
	"zebra giraffe quantum",
	"what is my blood type",
	"do I play chess",
	"which football club do I support",
	"favourite video game",
	"have I ever gone skydiving",
	"my tattoo",
	"the name of my boat",
	"which opera did I see last",
	"my stamp collection",
	"nuclear reactor maintenance schedule",
	"what is the capital of Mongolia",
	"my horse riding lessons",
	"how many goldfish do I have",
	"the password for the wifi router",
	"submarine",
	"astrology sign",
	"knitting patterns",
	"cryptocurrency wallet",
	"where do I live",
}

// WithAbsent returns a copy of set whose every namespace also has the
// [Absent] questions, as queries of kind [AbsentKind] with no evidence.
func WithAbsent(set Set) Set {
	out := set
	out.Queries = make(map[string][]Query, len(set.Queries))
	for ns, qs := range set.Queries {
		qs = append(qs[:len(qs):len(qs)], make([]Query, 0, len(Absent))...)
		for _, a := range Absent {
			qs = append(qs, Query{Q: a, Kind: AbsentKind})
		}
		out.Queries[ns] = qs
	}
	return out
}

// mentioned reports whether some note of namespace ns shares a word of q
// (BM25, the words, their variants and related words, finds a file).
func (r *Runner) mentioned(ctx context.Context, ns, q string) (bool, error) {
	args, err := json.Marshal(map[string]string{"query": q})
	if err != nil {
		return false, err
	}
	out, err := r.words.Call(ctx, memory.Invocation{Namespace: ns}, memory.SearchTool, args)
	if err != nil {
		return false, err
	}
	res, ok := out.(*memory.SearchResult)
	if !ok {
		return false, fmt.Errorf("retrieval: query %q: %+v", q, out)
	}
	return len(res.Matches) > 0, nil
}
