package retrieval

import _ "embed"

//go:embed testdata/notes3.json
var notes3JSON []byte

// Notes3 returns the third notes set, committed here
// (testdata/notes3.json): a third user's 25 short topic notes and 40
// queries in dev.json's mix of kinds (5 exact, 6 morphology, 9 question,
// 20 paraphrase), written by someone who had not tuned the ranker and
// before any search ran on it, so its figures estimate the held-out set's.
// Ranking parameters must not be chosen on it.
func Notes3() Set {
	set, err := parseNotes("notes3", "testdata/notes3.json", notes3JSON)
	if err != nil {
		panic(err) // the committed file is checked by the package's tests
	}
	return set
}
