package retrieval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a people-set session.
const (
	peopleMinRunes  = 2000 // a session is at least this long
	peopleMaxRunes  = 6000 // and at most this long
	peopleMaxPlaced = 4    // fact and distractor exchanges per session at most
)

// peopleNames are the friends' first names with their possessive
// pronoun; each pair takes two, and no name is used twice in a set of up
// to len/2 pairs.
var peopleNames = []struct{ name, pos string }{
	{"Priya", "her"}, {"Tomás", "his"}, {"Amara", "her"}, {"Jonah", "his"}, {"Ingrid", "her"}, {"Kwame", "his"},
	{"Lucía", "her"}, {"Felix", "his"}, {"Noor", "her"}, {"Declan", "his"}, {"Mei", "her"}, {"Rafael", "his"},
	{"Sadie", "her"}, {"Oskar", "his"}, {"Yara", "her"}, {"Elliot", "his"}, {"Hana", "her"}, {"Marcus", "his"},
	{"Leila", "her"}, {"Theo", "his"}, {"Zofia", "her"}, {"Idris", "his"}, {"Greta", "her"}, {"Mateo", "his"},
	{"Ayla", "her"}, {"Ruben", "his"}, {"Freya", "her"}, {"Kofi", "his"}, {"Nadia", "her"}, {"Silas", "his"},
	{"Esme", "her"}, {"Arjun", "his"}, {"Maren", "her"}, {"Dev", "his"}, {"Clara", "her"}, {"Bastian", "his"},
	{"Imani", "her"}, {"Hugo", "his"}, {"Talia", "her"}, {"Rowan", "his"}, {"Ines", "her"}, {"Cyrus", "his"},
	{"Mira", "her"}, {"Anton", "his"}, {"Saoirse", "her"}, {"Emeka", "his"}, {"Vera", "her"}, {"Luca", "his"},
}

// peopleTurn is one line of a session: who says it (0 or 1) and what.
type peopleTurn struct {
	who  int
	text string
}

// peopleSession is one session being built: its exchanges placed before
// the filler, and the small-talk topics its filler leans on.
type peopleSession struct {
	placed [][]peopleTurn
	topics []string
}

// ConversationsPeople generates the people conversation set, in the shape
// of public long-conversation benchmarks between two people: each pair of
// friends (two first names, different in every pair) chats over 20 to 28
// dated sessions, one file per session of 2,000 to 6,000 characters, as
// "Name: text" turns under a heading with the session's date and time.
// Both names are in every session, so names alone find nothing. Each
// friend tells the other facts about themselves in passing (3 told once,
// 2 lists told over 2 to 4 sessions, 2 events told with a relative time
// such as "last Saturday", 2 leanings told in 1 or 2 sessions), and later
// questions ask about them in the third person: "What has Priya painted?"
// (multi), "When did Tomás get promoted?" (temporal, the telling's session
// is the evidence), "Would Amara enjoy a hiking holiday?" (inference).
// Half the questions are direct (they share the telling's key word), half
// paraphrase it; the report groups them by that wording too. Every fact
// has same-subject distractor turns by the same person in other sessions.
// The filler is small talk built from 24 topics' templates with random
// slots, so no two sessions read alike. The same pairs and seed always give
// the same set; pairs is at most len(peopleNames)/2.
func ConversationsPeople(pairs int, seed uint64) Set {
	if pairs > len(peopleNames)/2 {
		panic(fmt.Sprintf("retrieval: people set: at most %d pairs", len(peopleNames)/2))
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	set := Set{Name: "conversations-people", Users: map[string]map[string]string{}, Queries: map[string][]Query{}}
	byKind := map[string][]int{}
	for i, f := range personFacts {
		byKind[f.kind] = append(byKind[f.kind], i)
	}
	names := rng.Perm(len(peopleNames))
	for p := range pairs {
		ns := fmt.Sprintf("pair%03d", p)
		who := [2]int{names[2*p], names[2*p+1]}
		sessions := make([]peopleSession, 20+rng.IntN(9))
		for s := range sessions {
			sessions[s].topics = []string{pick(rng, chatTopicNames), pick(rng, chatTopicNames)}
		}
		for _, k := range peopleKinds {
			idx := byKind[k.kind]
			perm := rng.Perm(len(idx)) // the two friends tell different facts
			for person := range 2 {
				for _, j := range perm[person*k.per : (person+1)*k.per] {
					q := placePersonFact(rng, sessions, personFacts[idx[j]], person, peopleNames[who[person]].name, peopleNames[who[person]].pos)
					set.Queries[ns] = append(set.Queries[ns], q)
				}
			}
		}
		files := map[string]string{}
		at := time.Date(2022+rng.IntN(3), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 9+rng.IntN(12), 15*rng.IntN(4), 0, 0, time.UTC)
		header := rng.IntN(len(peopleHeaders))
		for s := range sessions {
			files[sessionName(s)] = peopleSessionText(rng, s, at, header, [2]string{peopleNames[who[0]].name, peopleNames[who[1]].name}, sessions[s])
			at = at.AddDate(0, 0, 3+rng.IntN(19)).Add(time.Duration(rng.IntN(9)-4) * time.Hour)
		}
		set.Users[ns] = files
	}
	return set
}

// placePersonFact tells f, about person (0 or 1, called name, pronoun
// pos), in sessions: each part in its own session, in order, and two of
// its distractor turns in two other sessions (whose filler then leans on
// f's topic). It returns the question.
func placePersonFact(rng *rand.Rand, sessions []peopleSession, f personFact, person int, name, pos string) Query {
	parts := strings.Split(pick(rng, f.values), "|")
	if f.minParts > 0 {
		perm := rng.Perm(len(parts))[:f.minParts+rng.IntN(min(len(parts), 4)-f.minParts+1)]
		slices.Sort(perm)
		kept := make([]string, len(perm))
		for i, j := range perm {
			kept[i] = parts[j]
		}
		parts = kept
	}
	nNear := min(2, len(f.near))
	var free []int // sessions with room, in random order
	for _, s := range rng.Perm(len(sessions)) {
		if len(sessions[s].placed) < peopleMaxPlaced {
			free = append(free, s)
		}
	}
	if len(free) < len(parts)+nNear {
		panic("retrieval: people set: no room for a fact") // the bounds above leave plenty
	}
	tellAt := slices.Clone(free[:len(parts)])
	slices.Sort(tellAt)
	ask, wording := f.ask[0], "direct"
	if rng.IntN(2) == 0 {
		ask, wording = f.ask[1+rng.IntN(len(f.ask)-1)], "paraphrase"
	}
	q := Query{Q: strings.NewReplacer("{n}", name, "{p}", pos, "{v}", parts[0]).Replace(ask), Kind: f.kind, Wording: wording}
	other := 1 - person
	for i, s := range tellAt {
		r := strings.NewReplacer("{v}", parts[i], "{w}", pick(rng, peopleWhen))
		ex := []peopleTurn{
			{person, pick(rng, peopleInterjections) + capitalize(r.Replace(pick(rng, f.tell)))},
			{other, r.Replace(pick(rng, f.reply))},
		}
		if rng.IntN(2) == 0 { // the teller goes on about something else
			ex = append(ex, peopleTurn{person, life(rng)})
		}
		sessions[s].placed = append(sessions[s].placed, ex)
		q.Want = append(q.Want, sessionName(s))
	}
	for k, n := range rng.Perm(len(f.near))[:nNear] {
		s := free[len(parts)+k]
		sessions[s].topics = append(sessions[s].topics, f.topic)
		sessions[s].placed = append(sessions[s].placed, []peopleTurn{
			{person, pick(rng, peopleInterjections) + f.near[n]},
			{other, pick(rng, peopleReactions) + " " + fillSlots(rng, pick(rng, chatTopics[f.topic].says))},
		})
	}
	return q
}

// peopleHeaders are the session heading formats; each pair keeps one.
var peopleHeaders = []func(i int, at time.Time) string{
	func(i int, at time.Time) string {
		return fmt.Sprintf("# Session %d — %s on %s", i+1, strings.ToLower(at.Format("3:04 pm")), at.Format("2 January 2006"))
	},
	func(i int, at time.Time) string {
		return fmt.Sprintf("# Session %d (%s, %s)", i+1, at.Format("Monday 2 January 2006"), at.Format("15:04"))
	},
	func(i int, at time.Time) string {
		return fmt.Sprintf("## %s · session %d", at.Format("Jan 2, 2006, 3:04 PM"), i+1)
	},
}

// peopleSessionText writes session i, held at at, between the two
// friends: a heading, a greeting, the placed exchanges among small-talk
// exchanges on the session's topics, and a goodbye, between
// peopleMinRunes and peopleMaxRunes long.
func peopleSessionText(rng *rand.Rand, i int, at time.Time, header int, names [2]string, s peopleSession) string {
	first := rng.IntN(2) // who starts
	body := slices.Clone(s.placed)
	size := 0
	for _, ex := range body {
		size += exchangeRunes(names, ex)
	}
	head := peopleHeaders[header](i, at) + "\n\n"
	open := []peopleTurn{{first, pick(rng, peopleGreetings)}, {1 - first, pick(rng, peopleGreetingReplies)}}
	closing := []peopleTurn{{first, pick(rng, peopleClosings)}, {1 - first, pick(rng, peopleClosingReplies)}}
	size += utf8.RuneCountInString(head) + exchangeRunes(names, open) + exchangeRunes(names, closing)
	tk := newTalker(rng)
	target := peopleMinRunes + 100 + rng.IntN(peopleMaxRunes-peopleMinRunes-600)
	for size < target {
		t := pick(rng, s.topics)
		if rng.IntN(3) == 0 { // conversations wander
			t = pick(rng, chatTopicNames)
		}
		ex := tk.exchange(t)
		n := exchangeRunes(names, ex)
		if size+n > peopleMaxRunes-200 {
			break
		}
		body = slices.Insert(body, rng.IntN(len(body)+1), ex)
		size += n
	}
	// Turns alternate: small talk starts with whoever did not speak last,
	// and a placed exchange that starts with the last speaker goes on
	// that speaker's turn.
	var turns []peopleTurn
	for k, ex := range append(append([][]peopleTurn{open}, body...), closing) {
		last := turns[max(len(turns), 1)-1:]
		if k > 0 && ex[0].who == last[0].who {
			if !slices.ContainsFunc(s.placed, func(p []peopleTurn) bool { return &p[0] == &ex[0] }) {
				ex = slices.Clone(ex)
				for i := range ex {
					ex[i].who = 1 - ex[i].who
				}
			} else {
				turns[len(turns)-1].text += " " + ex[0].text
				ex = ex[1:]
			}
		}
		turns = append(turns, ex...)
	}
	var b strings.Builder
	b.WriteString(head)
	for _, t := range turns {
		b.WriteString(turnLine(names, t))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// talker makes a session's small talk, using each template at most once
// per session.
type talker struct {
	rng  *rand.Rand
	used map[string]bool
}

func newTalker(rng *rand.Rand) *talker { return &talker{rng: rng, used: map[string]bool{}} }

// pick is a template of ts not used yet in the session, filled, or "" when
// all are used.
func (tk *talker) pick(ts []string) string {
	s, _ := tk.pickIndex(ts)
	return s
}

// pickIndex is pick with the template's index (-1 with "").
func (tk *talker) pickIndex(ts []string) (string, int) {
	for _, i := range tk.rng.Perm(len(ts)) {
		if !tk.used[ts[i]] {
			tk.used[ts[i]] = true
			return fillSlots(tk.rng, ts[i]), i
		}
	}
	return "", -1
}

// exchange is two or three turns of small talk on topic t, started by
// either friend.
func (tk *talker) exchange(t string) []peopleTurn {
	rng := tk.rng
	a := rng.IntN(2)
	tp := chatTopics[t]
	first := pick(rng, peopleInterjections) + tk.say(t, false)
	ask, i := "", -1
	if rng.IntN(2) == 0 {
		ask, i = tk.pickIndex(tp.asks)
	}
	var second string
	if ask != "" {
		first += " " + ask
		if i < len(tp.answers) { // answers[i] answers asks[i]
			second = fillSlots(rng, tp.answers[i])
		}
		if second == "" || rng.IntN(2) == 0 {
			second = strings.TrimSpace(second + " " + tk.say(t, true))
		}
	} else {
		second = pick(rng, peopleReactions)
		if rng.IntN(3) > 0 {
			second += " " + tk.say(t, rng.IntN(2) == 0)
		}
	}
	ex := []peopleTurn{{a, first}, {1 - a, second}}
	if rng.IntN(3) == 0 {
		ex = append(ex, peopleTurn{a, tk.say(t, true)})
	}
	return ex
}

// say is one or two sentences on topic t (one only when short), or about
// life in general once t's templates are used up or at random.
func (tk *talker) say(t string, short bool) string {
	one := func() string {
		if tk.rng.IntN(3) == 0 {
			return life(tk.rng)
		}
		if s := tk.pick(chatTopics[t].says); s != "" {
			return s
		}
		return life(tk.rng)
	}
	out := one()
	if !short && tk.rng.IntN(2) == 0 {
		out += " " + one()
	}
	return out
}

// fillSlots replaces each {slot} of s with a random value from
// peopleSlots (other braces, {o}, are left for turnLine) and starts the
// sentence with a capital.
func fillSlots(rng *rand.Rand, s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		if vals, ok := peopleSlots[s[i+1:i+j]]; ok {
			b.WriteString(pick(rng, vals))
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return capitalize(b.String())
}

// turnLine writes t as "Name: text" and a blank line, {o} being the other
// friend's name and the text's first letter a capital.
func turnLine(names [2]string, t peopleTurn) string {
	return names[t.who] + ": " + capitalize(strings.ReplaceAll(t.text, "{o}", names[1-t.who])) + "\n\n"
}

// capitalize is s with its first letter a capital.
func capitalize(s string) string {
	if r, n := utf8.DecodeRuneInString(s); n > 0 {
		return string(unicode.ToUpper(r)) + s[n:]
	}
	return s
}

// exchangeRunes is the length of ex as written.
func exchangeRunes(names [2]string, ex []peopleTurn) int {
	n := 0
	for _, t := range ex {
		n += utf8.RuneCountInString(turnLine(names, t))
	}
	return n
}
