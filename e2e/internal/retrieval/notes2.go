package retrieval

import _ "embed"

//go:embed testdata/notes2.json
var notes2JSON []byte

// Notes2 returns the third notes set, committed here
// (testdata/notes2.json): a third user's 25 short topic notes and 40
// queries in dev.json's mix (5 exact, 6 morphology, 9 question, 20
// paraphrase), written by someone who had not tuned the ranker and before
// any search was run on it, so that its figures estimate a held-out set's.
// No ranking parameter is chosen on it.
func Notes2() Set {
	set, err := parseNotes("notes2", "testdata/notes2.json", notes2JSON)
	if err != nil {
		panic(err) // the committed file is checked by the package's tests
	}
	return set
}
