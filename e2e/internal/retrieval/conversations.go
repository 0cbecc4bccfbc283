package retrieval

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// fact is a kind of thing a user tells an assistant once (or in parts over
// several sessions) and asks about later, in other words.
type fact struct {
	kind   string
	values []string // one is picked per user
	// tell are user turns stating it ({v} is the value); one per part
	// when parts > 1, each part its own session.
	tell []string
	// reply is the assistant's answer to a tell turn.
	reply []string
	// ask are questions about it; one is picked.
	ask []string
	// near are turns on the same topic that do not hold the fact: they go
	// in other sessions, so the topic's words alone do not find it.
	near []string
}

var facts = []fact{
	{kind: "single", values: []string{"Miso", "Pepper", "Biscuit", "Luna", "Olive"},
		tell:  []string{"Big news: we adopted a rescue cat from the shelter on Saturday and named her {v}."},
		reply: []string{"Congratulations! {v} is a lovely name. Give her a quiet room for the first few days."},
		ask:   []string{"What is the name of the cat I adopted?", "what did we call our new cat"},
		near:  []string{"My neighbour's cat keeps sitting on our car.", "Do cats really need grain-free food?"}},
	{kind: "single", values: []string{"Lisbon", "Kyoto", "Valencia", "Montreal", "Edinburgh"},
		tell:  []string{"I've booked flights for our anniversary trip to {v} in October, five nights."},
		reply: []string{"{v} in October sounds wonderful. Want a few restaurant ideas?"},
		ask:   []string{"Where are we going for our anniversary?", "which city did I book for the anniversary trip"},
		near:  []string{"Flights are so expensive this year, I might skip travelling.", "My sister just came back from a trip and loved it."}},
	{kind: "single", values: []string{"peanuts", "shellfish", "sesame", "penicillin"},
		tell:  []string{"Note for later: I'm seriously allergic to {v}, I carry an epipen."},
		reply: []string{"Thanks for telling me; I'll keep your {v} allergy in mind for any recipes."},
		ask:   []string{"What am I allergic to?", "which allergy do I have"},
		near:  []string{"Pollen season is brutal, my eyes are itching all day.", "Is it normal for kids to grow out of food allergies?"}},
	{kind: "single", values: []string{"a Subaru Outback", "a used Honda Civic", "an electric Kia Niro", "a Toyota Corolla"},
		tell:  []string{"We finally bought a car! It's {v}, picked it up from the dealer yesterday."},
		reply: []string{"Congrats on the new car! {v} is a solid choice."},
		ask:   []string{"What car did we buy?", "which vehicle did I purchase from the dealer"},
		near:  []string{"Traffic on the ring road was terrible this morning.", "My car insurance renewal letter arrived."}},
	{kind: "single", values: []string{"Dr. Alvarez", "Dr. Chen", "Dr. Okafor", "Dr. Lindqvist"},
		tell:  []string{"My new dentist is {v}; the practice is two blocks from the office."},
		reply: []string{"Good to have a dentist close to work. Regular checkups with {v} should be easy."},
		ask:   []string{"Who is my dentist?", "what's the name of my dentist"},
		near:  []string{"My tooth has been sensitive to cold drinks.", "Should I switch to an electric toothbrush?"}},
	{kind: "single", values: []string{"the half marathon in Porto", "a 10K in Berlin", "the city marathon", "a trail race in the Alps"},
		tell:  []string{"I signed up for {v} next spring, so I'm starting a training plan."},
		reply: []string{"Exciting! For {v}, build your weekly mileage slowly and keep one long run a week."},
		ask:   []string{"Which race did I register for?", "what running event am I training for"},
		near:  []string{"I went for a short jog but my knee felt stiff.", "Are running shoes worth replacing every year?"}},
	{kind: "single", values: []string{"Spanish", "Japanese", "Italian", "Korean"},
		tell:  []string{"I started taking {v} lessons on Tuesday evenings with a tutor online."},
		reply: []string{"Learning {v} is a great goal. Tuesday lessons plus daily flashcards work well."},
		ask:   []string{"Which language am I learning?", "what language lessons do I take on Tuesdays"},
		near:  []string{"My colleague speaks four languages, it's impressive.", "Subtitles help me follow foreign films."}},
	{kind: "single", values: []string{"sourdough bread", "fresh pasta", "kimchi", "croissants"},
		tell:  []string{"This weekend I tried making {v} from scratch for the first time and it turned out great."},
		reply: []string{"Homemade {v} is a real achievement! Did you follow a recipe?"},
		ask:   []string{"What did I bake or cook from scratch for the first time?", "which homemade food did I make that weekend"},
		near:  []string{"We ordered takeaway again, I was too tired to cook.", "What's a quick weeknight dinner?"}},
	{kind: "single", values: []string{"a product designer", "a data engineer", "a project manager", "a nurse practitioner"},
		tell:  []string{"I accepted the offer! Starting next month I'll be working as {v} at a startup."},
		reply: []string{"Congratulations on the new job as {v}! How are you feeling about the change?"},
		ask:   []string{"What is my new job?", "what role did I accept at the startup"},
		near:  []string{"Work has been hectic, too many meetings.", "My manager wants a status report by Friday."}},
	{kind: "single", values: []string{"my grandmother", "my brother Tom", "my best friend Ana", "my aunt Rosa"},
		tell:  []string{"It's {v}'s 80th-style big birthday party on the 14th, and I'm in charge of the cake."},
		reply: []string{"What a fun job. For {v}'s party, a simple layered sponge is easy to scale."},
		ask:   []string{"Whose birthday party am I organising the cake for?", "who is the party on the 14th for"},
		near:  []string{"Birthdays at the office always mean too much cake.", "I forgot a friend's birthday last year and felt awful."}},
	{kind: "multi", values: []string{"Denver|Austin|Toronto", "Madrid|Paris|Milan", "Seattle|Chicago|Boston"},
		tell: []string{"Back from a work trip to {v1}; the client meeting went well.",
			"Another work trip coming up: I fly to {v2} on Monday for a workshop.",
			"Just landed in {v3} for the quarterly work trip, hotel is fine."},
		reply: []string{"Glad the trip went well!", "Safe travels, hope the workshop is useful.", "Enjoy your stay and get some rest."},
		ask:   []string{"Which cities did I travel to for work?", "list my business trips this year"},
		near:  []string{"I love travelling but airports are exhausting.", "My company changed its expense policy."}},
	{kind: "multi", values: []string{"a guitar|a piano", "a bicycle|a kayak", "a camera|a telescope"},
		tell: []string{"I bought {v1} second-hand this week, it was a bargain.",
			"Couldn't resist: I also bought {v2}, my partner thinks I'm crazy."},
		reply: []string{"Nice find!", "Ha, hobbies need gear. Enjoy it!"},
		ask:   []string{"What things did I buy second-hand or recently?", "what purchases did I mention making"},
		near:  []string{"I should really declutter the garage.", "Online marketplaces are full of scams."}},
	{kind: "update", values: []string{"Oakland|Portland", "Leeds|Bristol", "Lyon|Nantes"},
		tell: []string{"We're moving! Signed a lease on a flat in {v1}.",
			"Change of plans: the job moved, so we relocated again, now we live in {v2}."},
		reply: []string{"Moving is a big step, good luck with the boxes.", "Another move! Hope {v2} treats you well."},
		ask:   []string{"Where do I live now?", "which city did we move to"},
		near:  []string{"House prices here are ridiculous.", "Our landlord finally fixed the heating."}},
}

// filler are ordinary chat turns with the common words every session has.
var filler = []string{
	"Can you help me plan my week? I have a lot going on and I keep forgetting things.",
	"Sure. Let's list what you have to do, then what can wait, and block time for the important parts.",
	"What's a good way to stay focused when working from home?",
	"Try a fixed start time, a short walk before work, and turning off notifications for an hour at a time.",
	"I had a long day, honestly I just want to talk about something light.",
	"Of course. What have you been enjoying lately, any shows or books?",
	"Do you think it's worth getting up early to exercise?",
	"If mornings suit you, yes; the best time is the one you can keep doing every week.",
	"The weather has been grey and rainy all week, it's getting me down.",
	"That's hard. Some daylight at lunch and a warm drink can help a little.",
	"How do I write a polite email to decline an invitation?",
	"Thank them, say you can't make it, and suggest another time if you'd like to see them.",
	"I'm trying to save more money each month. Any tips?",
	"Automate a transfer on payday, track spending for a month, and cut one subscription you don't use.",
	"What did people do before smartphones to remember appointments?",
	"Paper diaries, wall calendars and sticky notes on the fridge, mostly.",
	"Can you recommend a podcast for my commute?",
	"What topics do you like? History, science and comedy each have great ones.",
	"I keep waking up at 3am and can't get back to sleep.",
	"That's frustrating. A regular bedtime, less screen time late and no caffeine after noon may help.",
	"My friend asked me for advice and I didn't know what to say.",
	"Sometimes listening is the most helpful thing; you can ask what they need from you.",
	"Is it better to rent or buy in the long run?",
	"It depends on prices, how long you'll stay and your savings; let's compare the numbers if you want.",
	"Thanks, that's useful. I'll think about it and come back to you.",
	"Anytime. I'm here whenever you want to pick this up again.",
}

// Conversations generates the synthetic conversation set: users who chat
// with an assistant over many sessions (one file per session, 2,000 to
// 6,000 characters), telling it facts once, in parts or as updates, and
// asking about them later in other words. Seed picks the set; the same
// seed always gives the same set.
func Conversations(users int, seed uint64) Set {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	set := Set{Name: "conversations", Users: map[string]map[string]string{}, Queries: map[string][]Query{}}
	for u := range users {
		ns := fmt.Sprintf("user%03d", u)
		nSessions := 10 + rng.IntN(9)
		sessions := make([][]string, nSessions) // turns per session
		// Pick 6 facts for this user and place their parts.
		chosen := rng.Perm(len(facts))[:6]
		for _, fi := range chosen {
			f := facts[fi]
			val := f.values[rng.IntN(len(f.values))]
			parts := strings.Split(val, "|")
			where := rng.Perm(nSessions)[:len(f.tell)+len(f.near)]
			var want []string
			for p, tell := range f.tell {
				s := where[p]
				v := parts[min(p, len(parts)-1)]
				line := strings.NewReplacer("{v}", v, "{v1}", parts[0], "{v2}", parts[min(1, len(parts)-1)], "{v3}", parts[len(parts)-1])
				sessions[s] = append(sessions[s], "User: "+line.Replace(tell), "Assistant: "+line.Replace(f.reply[p%len(f.reply)]))
				want = append(want, sessionName(s))
			}
			for k, near := range f.near {
				s := where[len(f.tell)+k]
				sessions[s] = append(sessions[s], "User: "+near, "Assistant: "+filler[1+2*rng.IntN(len(filler)/2)])
			}
			set.Queries[ns] = append(set.Queries[ns], Query{Q: f.ask[rng.IntN(len(f.ask))], Want: want, Kind: f.kind})
		}
		files := map[string]string{}
		for s, turns := range sessions {
			files[sessionName(s)] = session(rng, s, turns)
		}
		set.Users[ns] = files
	}
	return set
}

func sessionName(i int) string { return fmt.Sprintf("session-%02d.md", i+1) }

// session writes one session: a heading, then filler exchanges with the
// given turns (in pairs) at random places, 2,000 to 6,000 characters.
func session(rng *rand.Rand, i int, turns []string) string {
	target := 2000 + rng.IntN(3600)
	var pairs [][2]string
	for k := 0; k+1 < len(turns); k += 2 {
		pairs = append(pairs, [2]string{turns[k], turns[k+1]})
	}
	size := 0
	for _, p := range pairs {
		size += len(p[0]) + len(p[1]) + 2
	}
	var out [][2]string
	for size < target {
		k := rng.IntN(len(filler) / 2)
		p := [2]string{"User: " + filler[2*k], "Assistant: " + filler[2*k+1]}
		if size+len(p[0])+len(p[1])+2 > 5800 {
			break
		}
		out = append(out, p)
		size += len(p[0]) + len(p[1]) + 2
	}
	for _, p := range pairs {
		at := rng.IntN(len(out) + 1)
		out = append(out[:at], append([][2]string{p}, out[at:]...)...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Session %d\n\n", i+1)
	for _, p := range out {
		b.WriteString(p[0] + "\n" + p[1] + "\n")
	}
	return b.String()
}
