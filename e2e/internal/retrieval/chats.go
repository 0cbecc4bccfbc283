package retrieval

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

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
		ns, files, qs, err := parseChat(f.path, f.b)
		if err != nil {
			panic(err) // the committed files are checked by the package's tests
		}
		set.Users[ns], set.Queries[ns] = files, qs
	}
	return set
}

// parseChat reads one conversation in dev.json's format, but with a list
// of wanted files per query.
func parseChat(path string, b []byte) (string, map[string]string, []Query, error) {
	var raw struct {
		Namespace string            `json:"namespace"`
		Files     map[string]string `json:"files"`
		Queries   []struct {
			Q    string   `json:"q"`
			Want []string `json:"want"`
			Kind string   `json:"kind"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return "", nil, nil, fmt.Errorf("retrieval: %s: %w", path, err)
	}
	if raw.Namespace == "" || len(raw.Files) == 0 || len(raw.Queries) == 0 {
		return "", nil, nil, fmt.Errorf("retrieval: %s: want namespace, files and queries", path)
	}
	var qs []Query
	for _, q := range raw.Queries {
		if len(q.Want) == 0 {
			return "", nil, nil, fmt.Errorf("retrieval: %s: query %q wants no file", path, q.Q)
		}
		for _, w := range q.Want {
			if raw.Files[w] == "" {
				return "", nil, nil, fmt.Errorf("retrieval: %s: query %q wants %q, which is not one of its files", path, q.Q, w)
			}
		}
		qs = append(qs, Query{Q: q.Q, Want: q.Want, Kind: q.Kind})
	}
	return raw.Namespace, raw.Files, qs, nil
}
