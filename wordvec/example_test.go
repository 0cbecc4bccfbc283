package wordvec_test

import (
	"context"
	"fmt"
	"sort"

	"github.com/agentmem/agentmem/wordvec"
)

func ExampleEmbedder_Embed() {
	ctx := context.Background()
	e, err := wordvec.New(ctx, nil)
	if err != nil {
		panic(err)
	}
	notes := []string{
		"Prefers trains to planes for trips under six hours.",
		"Dog called Bolacha, a four-year-old beagle.",
		"Mortgage payment leaves on the 5th of every month.",
	}
	vecs, err := e.Embed(ctx, append([]string{"Does she like flying?"}, notes...))
	if err != nil {
		panic(err)
	}
	query, docs := vecs[0], vecs[1:]
	order := []int{0, 1, 2}
	score := func(i int) (s float32) {
		for k := range query {
			s += query[k] * docs[i][k]
		}
		return s
	}
	sort.Slice(order, func(a, b int) bool { return score(order[a]) > score(order[b]) })
	fmt.Println(e.Model())
	fmt.Println(notes[order[0]])
	// Output:
	// wordvec/glove-6b-100d-100k-int8@1
	// Prefers trains to planes for trips under six hours.
}
