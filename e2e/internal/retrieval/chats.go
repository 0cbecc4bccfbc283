package retrieval

import _ "embed"

// The hand-written conversation sets: two friends each, one file per
// session, third-person questions with their evidence sessions.
var (
	//go:embed testdata/chat-a.json
	chatAJSON []byte
	//go:embed testdata/chat-b.json
	chatBJSON []byte
)

// Chats returns the hand-written conversation set: two conversations
// between friends (16 sessions of 2,000 to 4,500 characters each, in the
// shape of public long-conversation benchmarks), written by engineers who
// had not seen the ranker and never searched while writing, with 30
// questions each (single-session, multi-session, temporal, inference).
// Its figures are the fairest estimate we have of a held-out
// conversation set, on a small sample (60 questions).
func Chats() Set {
	set := Set{Name: "conversations-chats", Users: map[string]map[string]string{}, Queries: map[string][]Query{}}
	for _, f := range []struct {
		path string
		b    []byte
	}{{"testdata/chat-a.json", chatAJSON}, {"testdata/chat-b.json", chatBJSON}} {
		ns, files, qs, err := parseSet(f.path, f.b)
		if err != nil {
			panic(err) // the committed files are checked by the package's tests
		}
		set.Users[ns], set.Queries[ns] = files, qs
	}
	return set
}
