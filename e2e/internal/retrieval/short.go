package retrieval

import (
	"math/rand/v2"
	"strings"
)

// ShortChat is a short conversation of turns lines (at least 2), each
// "Speaker: text", made of the generated sets' filler: either a user
// asking an assistant about one of the hard set's 14 topics (the
// assistant answering with one to three of its points), or two friends of
// the people set making small talk on its 24 topics, with random slots.
// It holds no fact of any set. Other packages use it as filler of the
// size of a note; the same rng state gives the same chat.
func ShortChat(rng *rand.Rand, turns int) []string {
	turns = max(turns, 2)
	out := make([]string, 0, turns+2)
	if rng.IntN(2) == 0 {
		t := pick(rng, topicNames)
		for len(out) < turns {
			if rng.IntN(4) == 0 { // conversations wander
				t = pick(rng, topicNames)
			}
			ask := pick(rng, topics[t].asks)
			if rng.IntN(3) == 0 {
				ask = life(rng) + " " + ask
			}
			if rng.IntN(4) == 0 {
				k := rng.IntN(len(filler) / 2)
				out = append(out, "User: "+filler[2*k], "Assistant: "+filler[2*k+1])
				continue
			}
			var reply []string
			if rng.IntN(2) == 0 {
				reply = append(reply, pick(rng, openers))
			}
			pts := topics[t].points
			for _, j := range rng.Perm(len(pts))[:1+rng.IntN(3)] {
				reply = append(reply, pts[j])
			}
			out = append(out, "User: "+ask, "Assistant: "+strings.Join(reply, " "))
		}
		return out[:turns]
	}
	who := rng.Perm(len(peopleNames))[:2]
	names := [2]string{peopleNames[who[0]].name, peopleNames[who[1]].name}
	tk := newTalker(rng)
	ts := []string{pick(rng, chatTopicNames), pick(rng, chatTopicNames)}
	for len(out) < turns {
		t := pick(rng, ts)
		if rng.IntN(3) == 0 {
			t = pick(rng, chatTopicNames)
		}
		for _, turn := range tk.exchange(t) {
			out = append(out, strings.TrimSuffix(turnLine(names, turn), "\n\n"))
		}
	}
	return out[:turns]
}
