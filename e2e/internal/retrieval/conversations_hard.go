package retrieval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of a hard-set session.
const (
	hardMinRunes = 2000 // a session is at least this long
	hardMaxRunes = 6000 // and at most this long
	hardMaxPairs = 3    // fact and distractor exchanges per session at most
)

// hardPair is one exchange placed in a session before its filler: a
// user's turn and the start of the assistant's answer, which goes on with
// points from topic.
type hardPair struct {
	user, reply, topic string
}

// hardSession is one session being built.
type hardSession struct {
	topic string
	pairs []hardPair
}

// ConversationsHard generates the hard conversation set, in the shape of
// public long-conversation benchmarks: each user chats with an assistant
// over 22 to 30 dated sessions (one file per session, 2,000 to 6,000
// characters, mostly about one of 14 everyday topics, with long list-like
// assistant answers) and later asks 10 questions: 2 about facts the user
// stated once, 1 about something the assistant recommended, 1 asking for a
// suggestion that should follow a stated preference, 2 aggregating 2 to 4
// sessions, 2 about values updated later (every session of the value is
// evidence) and 2 temporal ones (when, which first). Questions are drawn
// from 45 fact templates, each told in several phrasings and asked either
// directly (about half the questions: they share the telling's key
// word, "What's the name of the cat we adopted?") or in a paraphrase that
// shares few words or none ("What's my pet called?" for "a rescue
// kitten"); the report groups them by that wording too. Every fact also
// has distractor turns on its topic, in sessions on that topic, without
// it.
// The same users and seed always give the same set; [Conversations] is
// the easier set and stays as it was.
func ConversationsHard(users int, seed uint64) Set {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	set := Set{Name: "conversations-hard", Users: map[string]map[string]string{}, Queries: map[string][]Query{}}
	byKind := map[string][]int{}
	for i, f := range hardFacts {
		byKind[f.kind] = append(byKind[f.kind], i)
	}
	for u := range users {
		ns := fmt.Sprintf("user%03d", u)
		sessions := make([]hardSession, 22+rng.IntN(9))
		for s := range sessions {
			sessions[s].topic = topicNames[rng.IntN(len(topicNames))]
		}
		for _, k := range hardKinds {
			idx := byKind[k.kind]
			for _, j := range rng.Perm(len(idx))[:k.per] {
				f := hardFacts[idx[j]]
				q := placeFact(rng, sessions, f)
				set.Queries[ns] = append(set.Queries[ns], q)
			}
		}
		files := map[string]string{}
		day := time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)
		for s := range sessions {
			files[sessionName(s)] = hardSessionText(rng, s, day, sessions[s])
			day = day.AddDate(0, 0, 1+rng.IntN(7))
		}
		set.Users[ns] = files
	}
	return set
}

// placeFact tells f's parts in sessions (in order, each in its own
// session), puts two of its distractor turns in two other sessions (which
// then are about f's topic), and returns the question.
func placeFact(rng *rand.Rand, sessions []hardSession, f hardFact) Query {
	parts := strings.Split(f.values[rng.IntN(len(f.values))], "|")
	if f.minParts > 0 {
		parts = parts[:f.minParts+rng.IntN(len(parts)-f.minParts+1)]
	}
	nNear := min(2, len(f.near))
	var free []int // sessions with room, in random order
	for _, s := range rng.Perm(len(sessions)) {
		if len(sessions[s].pairs) < hardMaxPairs {
			free = append(free, s)
		}
	}
	if len(free) < len(parts)+nNear {
		panic("retrieval: hard set: no room for a fact") // the bounds above leave plenty
	}
	tellAt := slices.Clone(free[:len(parts)])
	slices.Sort(tellAt) // parts are told in order: an update's last value is the latest
	ask, wording := f.ask[0], "direct"
	if rng.IntN(2) == 0 {
		ask, wording = f.ask[1+rng.IntN(len(f.ask)-1)], "paraphrase"
	}
	q := Query{Q: strings.ReplaceAll(ask, "{v}", parts[0]), Kind: f.kind, Wording: wording}
	for p, s := range tellAt {
		tells := f.tell[min(p, len(f.tell)-1)]
		replies := f.reply[min(p, len(f.reply)-1)]
		r := strings.NewReplacer("{v}", parts[p])
		sessions[s].pairs = append(sessions[s].pairs, hardPair{
			user:  r.Replace(tells[rng.IntN(len(tells))]),
			reply: r.Replace(replies[rng.IntN(len(replies))]),
			topic: f.topic,
		})
		q.Want = append(q.Want, sessionName(s))
	}
	for k, n := range rng.Perm(len(f.near))[:nNear] {
		s := free[len(parts)+k]
		sessions[s].topic = f.topic
		sessions[s].pairs = append(sessions[s].pairs, hardPair{user: f.near[n], topic: f.topic})
	}
	return q
}

// hardSessionText writes session i, held on day: a heading with the date,
// then exchanges on the session's topic with its placed pairs at random
// places, between hardMinRunes and hardMaxRunes long.
func hardSessionText(rng *rand.Rand, i int, day time.Time, s hardSession) string {
	var out []string // exchanges, each "User: …\nAssistant: …\n"
	size := 0
	asks := rng.Perm(len(topics[s.topic].asks)) // the session's questions, each asked once at first
	next := 0
	for _, p := range s.pairs {
		user, t := p.user, p.topic
		if rng.IntN(2) == 0 { // the fact in passing, then the session's question
			user += " Anyway, what I wanted to ask: " + topics[s.topic].asks[asks[next%len(asks)]]
			next++
			t = s.topic
		}
		reply := answer(rng, t, 2+rng.IntN(2))
		if p.reply != "" {
			reply = p.reply + "\n" + reply
		}
		ex := "User: " + user + "\nAssistant: " + reply + "\n"
		out = append(out, ex)
		size += utf8.RuneCountInString(ex) + 1
	}
	head := fmt.Sprintf("# Session %d, %s\n\n", i+1, day.Format("Monday 2 January 2006"))
	size += utf8.RuneCountInString(head)
	target := hardMinRunes + rng.IntN(hardMaxRunes-hardMinRunes-300)
	for size < target {
		t := s.topic
		if rng.IntN(4) == 0 { // conversations wander
			t = topicNames[rng.IntN(len(topicNames))]
		}
		ask := pick(rng, topics[t].asks)
		if t == s.topic && next < len(asks) {
			ask = topics[t].asks[asks[next]]
			next++
		}
		ex := "User: " + ask + "\nAssistant: " + answer(rng, t, 3+rng.IntN(4)) + "\n"
		if size+utf8.RuneCountInString(ex)+1 > hardMaxRunes-100 {
			break
		}
		at := rng.IntN(len(out) + 1)
		out = slices.Insert(out, at, ex)
		size += utf8.RuneCountInString(ex) + 1
	}
	return head + strings.Join(out, "\n")
}

// answer is a long assistant answer on topic t: an opener, n numbered
// points and a closing line.
func answer(rng *rand.Rand, t string, n int) string {
	pts := topics[t].points
	var b strings.Builder
	b.WriteString(pick(rng, openers))
	for k, j := range rng.Perm(len(pts))[:min(n, len(pts))] {
		fmt.Fprintf(&b, "\n%d. %s", k+1, pts[j])
	}
	b.WriteString("\n" + pick(rng, closers))
	return b.String()
}

func pick(rng *rand.Rand, s []string) string { return s[rng.IntN(len(s))] }
