package retrieval

// The kinds of the hard set's questions, after the long-conversation
// benchmarks' question types.
const (
	kindUser       = "single-user"      // a fact the user stated once
	kindAssistant  = "single-assistant" // something the assistant said once
	kindPreference = "preference"       // a suggestion that should follow a stated preference
	kindMulti      = "multi-session"    // an aggregation over 2 to 4 sessions
	kindUpdate     = "update"           // a value changed later: the latest wins
	kindTemporal   = "temporal"         // when, or which came first
)

// hardKinds are the kinds with how many questions of each every user gets
// (10 in all, roughly the long-conversation benchmarks' mix).
var hardKinds = []struct {
	kind string
	per  int
}{{kindUser, 2}, {kindAssistant, 1}, {kindPreference, 1}, {kindMulti, 2}, {kindUpdate, 2}, {kindTemporal, 2}}

// hardFact is one thing a user tells (or is told) in one session or,
// in parts, over several, and asks about later in other words.
type hardFact struct {
	kind  string
	topic string // its turns' answers come from this topic, as do its distractors'
	// values are picked one per user; "|" separates the parts, each told
	// in its own session, in order.
	values []string
	// tell are the phrasings of the user's turn for each part ({v} is the
	// part's value); the last entry serves later parts.
	tell [][]string
	// reply are phrasings of the assistant's first lines for each part,
	// as for tell; a long answer from the topic follows.
	reply [][]string
	// ask are the question's phrasings; {v} is the first part's value.
	// The first shares the telling's key word; the others paraphrase.
	ask []string
	// near are user turns on the same topic without the fact, put in
	// other sessions.
	near []string
	// minParts, for multi-session facts, is the least number of parts
	// told (the rest are dropped); 0 tells them all.
	minParts int
}

var hardFacts = []hardFact{
	// Single-session user facts.
	{kind: kindUser, topic: "home", values: []string{"Miso", "Pepper", "Biscuit", "Luna"},
		tell: [][]string{{
			"Big news at home: we brought a rescue kitten back from the shelter on Saturday and we're calling her {v}.",
			"The shelter finally approved our application, so {v} the little tabby lives with us now and has claimed the sofa.",
			"Sorry if I'm distracted, {v} (the cat we just adopted) keeps walking across my keyboard.",
		}},
		reply: [][]string{{"How lovely, congratulations on {v}! Give her a quiet room for the first few days while she settles in.", "{v} is a great name. Rescue cats often take a week or two to relax, so don't worry if she hides at first."}},
		ask:   []string{"What's the name of the cat we adopted?", "What's my pet called?", "What name did we give the animal we took in?", "remind me of our new companion's name"},
		near: []string{"My neighbour's dog is called Rex and he barks at every delivery van, it drives me mad.",
			"Are there animals that are fine being left alone all day while we're both at work?",
			"My sister wants a hamster for her son, are they good first pets?"}},
	{kind: kindUser, topic: "work", values: []string{"a product designer", "a data engineer", "a project manager", "an operations lead"},
		tell: [][]string{{
			"I accepted the offer! From next month I'll be working as {v} at a small logistics startup.",
			"Signed the contract today, so I'm officially leaving the bank to join a startup as {v}.",
		}},
		reply: [][]string{{"Congratulations on the new role as {v}! A fresh start at a startup is exciting.", "That's great news. Moving to a startup as {v} will be quite a change of pace."}},
		ask:   []string{"What job did I accept at the startup?", "What's my new position going to be?", "What will I be doing in my next job?", "what title did I get at the company I'm joining"},
		near: []string{"My manager wants the quarterly numbers redone by Friday and I'm not sure I can do it.",
			"A recruiter messaged me on LinkedIn about a job in insurance, should I reply?"}},
	{kind: kindUser, topic: "cooking", values: []string{"peanuts", "shellfish", "sesame", "tree nuts"},
		tell: [][]string{{
			"Quick thing to keep in mind whenever you suggest recipes: {v} make my throat swell up, I carry an EpiPen everywhere.",
			"I ended up in A&E as a teenager after eating {v}, so I still check every label very carefully.",
		}},
		reply: [][]string{{"Thank you for telling me, I'll make sure nothing I suggest contains {v}.", "That sounds frightening. I'll keep {v} out of any recipe ideas."}},
		ask:   []string{"What am I allergic to?", "Is there any food that's dangerous for me?", "Do I have an allergy you should remember?", "what ingredient must I avoid for medical reasons"},
		near: []string{"My son's class has gone nut-free, what snacks can I pack for him?",
			"Is lactose intolerance the same thing as being allergic to milk?"}},
	{kind: kindUser, topic: "money", values: []string{"a Subaru Outback", "a used Honda Civic", "an electric Kia Niro", "a Toyota RAV4 hybrid"},
		tell: [][]string{{
			"We finally replaced the old hatchback with {v}; we picked it up from the dealer yesterday.",
			"The garage said the old banger wasn't worth fixing, so we bought {v} over the weekend.",
		}},
		reply: [][]string{{"Congratulations on {v}! It's a reliable choice.", "{v} should serve you well for years. Keep the service book in the glovebox."}},
		ask:   []string{"What car did we buy?", "What do we drive now?", "what vehicle did we get to replace the old one", "Which automobile did we purchase?"},
		near: []string{"Petrol prices went up again this week, it's ridiculous.",
			"Should I get breakdown cover or is it a waste of money?"}},
	{kind: kindUser, topic: "health", values: []string{"Dr. Alvarez", "Dr. Chen", "Dr. Okafor", "Dr. Lindqvist"},
		tell: [][]string{{
			"The new dentist I'm seeing, {v}, found a small cavity; at least the practice is right next to my office.",
			"I switched to {v} for my teeth because my old practice closed, she's very gentle.",
		}},
		reply: [][]string{{"Good to have a dentist so close to work. A small filling is quick these days.", "Having a gentle dentist makes a big difference. Regular check-ups with {v} should be easy to keep."}},
		ask:   []string{"Who is my new dentist?", "Who looks after my teeth?", "what's the name of the person who did my filling", "who is my dental practitioner"},
		near: []string{"My gums bleed a little when I floss, is that normal?",
			"Are electric toothbrushes actually better than manual ones?"}},
	{kind: kindUser, topic: "hobbies", values: []string{"cello", "ukulele", "saxophone", "bass guitar"},
		tell: [][]string{{
			"I've been practising the {v} for twenty minutes every evening since my birthday, my neighbours are very patient.",
			"My partner gave me a {v} for my birthday and I've been playing scales every night.",
		}},
		reply: [][]string{{"That's a wonderful habit. Twenty minutes a day on the {v} adds up quickly.", "What a thoughtful present! Scales are dull but they pay off on the {v}."}},
		ask:   []string{"Which instrument have I been practising every evening?", "Which musical instrument am I learning?", "what do I play in the evenings", "What did I get for my birthday that I practise on?"},
		near: []string{"We went to a jazz concert last night and the drummer was incredible.",
			"Is it too late to learn to sing properly in your thirties?"}},
	{kind: kindUser, topic: "learning", values: []string{"pottery", "accounting", "web development", "digital photography"},
		tell: [][]string{{
			"I enrolled in an evening course on {v} at the community college, it starts in two weeks.",
			"Guess what, I finally signed up for night classes in {v}, Tuesdays and Thursdays.",
		}},
		reply: [][]string{{"That's exciting! Evening classes in {v} are a great way to meet people too.", "Good for you. Two evenings a week of {v} is a manageable pace."}},
		ask:   []string{"What evening course did I enrol in?", "What am I studying at night?", "What subject did I register to take at college?", "which course did I join"},
		near: []string{"My cousin is doing an MBA part-time and says it's exhausting.",
			"Are certificates from online courses worth anything to employers?"}},
	{kind: kindUser, topic: "family", values: []string{"a vineyard near Napa", "an old barn in Vermont", "a castle in Scotland", "the botanical gardens"},
		tell: [][]string{{
			"My sister finally picked her venue: the wedding will be at {v} next June.",
			"Family news: my little sister's getting married at {v}, and I'm the maid of honour.",
		}},
		reply: [][]string{{"{v} sounds like a beautiful setting for a wedding!", "Congratulations to your sister! Being maid of honour at {v} will be special."}},
		ask:   []string{"Where is my sister's wedding?", "Where is my sibling's ceremony going to be?", "What's the location of the marriage in my family next year?"},
		near: []string{"A colleague's wedding last month went on until 3am, I'm still tired.",
			"How much is a normal amount to spend on a wedding gift?"}},
	{kind: kindUser, topic: "fitness", values: []string{"12 km", "8 km", "5 km", "15 km"},
		tell: [][]string{{
			"Now that the new bike lane opened I cycle to work every day, it's {v} each way.",
			"I've started riding my bike to the office, {v} each direction, and I feel so much better.",
		}},
		reply: [][]string{{"Cycling {v} each way is a great bit of daily exercise.", "That's a brilliant change. {v} each way adds up to a lot of riding in a week."}},
		ask:   []string{"How far do I cycle to work?", "How long is my commute on two wheels?", "What distance do I ride to get to my job?"},
		near: []string{"Is it safe to cycle in heavy rain or should I take the bus?",
			"My colleague runs to work and arrives soaked, how does he do it?"}},
	{kind: kindUser, topic: "family", values: []string{"Maya", "Noor", "Elsie", "Ines"},
		tell: [][]string{{
			"Our daughter {v} started kindergarten this week and cried at the gate every morning.",
			"{v} had her first week at kindergarten, she's only four and she already has a best friend.",
		}},
		reply: [][]string{{"The first week is hard for parents too. Most children settle within a few weeks.", "How sweet that {v} made a friend already! That usually helps with the goodbyes."}},
		ask:   []string{"What's my daughter's name?", "What's my child's name?", "What is my little girl called?", "who began at school recently"},
		near: []string{"My friend's son refuses to eat anything green, any ideas?",
			"How do I explain to a four-year-old why grandma lives far away?"}},

	// Single-session assistant facts.
	{kind: kindAssistant, topic: "books", values: []string{"The Remains of the Day", "A Gentleman in Moscow", "Station Eleven", "The Name of the Wind"},
		tell: [][]string{{
			"Can you suggest a novel for a long flight next week? I like character-driven stories more than thrillers.",
			"I need something to read on a twelve-hour flight, nothing too heavy. What would you pick?",
		}},
		reply: [][]string{{"For a long flight I'd pick {v}: it's absorbing, the chapters are short and it rewards attention.", "My suggestion is {v}. It's easy to sink into and hard to put down."}},
		ask:   []string{"Which novel did you suggest for my long flight?", "What was the book you told me to take on the plane?", "remind me of the title you recommended for my trip"},
		near: []string{"I gave up on the last book I started, it was so slow.",
			"Do you think I should get an e-reader or stick with paperbacks?"}},
	{kind: kindAssistant, topic: "fitness", values: []string{"seated cat-cow stretch", "seated spinal twist", "figure-four hip stretch", "standing hamstring reach"},
		tell: [][]string{{
			"My lower back aches after sitting at my desk all day. Is there something I can do without leaving my chair?",
			"By 4pm my back is killing me from the office chair. Any quick movement I can do at work?",
		}},
		reply: [][]string{{"Try the {v}: hold it for thirty seconds, three times, once an hour.", "A good one is the {v}. It takes a minute and nobody will notice you doing it."}},
		ask:   []string{"What stretch did you suggest for my lower back?", "Which exercise did you recommend for my sore back?", "What was that move you said I should do during the workday?"},
		near: []string{"My shoulders get stiff when I run, is that a posture thing?",
			"Is yoga or pilates better for general flexibility?"}},
	{kind: kindAssistant, topic: "cooking", values: []string{"baked ziti", "chicken enchiladas", "vegetable lasagne", "a big pot of chili"},
		tell: [][]string{{
			"I need a crowd-pleasing dish for a potluck at work, about twelve people. Ideas?",
			"There's a bring-a-dish party on Saturday and I have no idea what to make for a big group.",
		}},
		reply: [][]string{{"Make {v}: it scales easily, travels well in one dish and reheats without drying out.", "I'd go with {v}. You can assemble it the night before and just bake it on the day."}},
		ask:   []string{"What dish did you suggest for the potluck?", "What did you say I should bring to the shared meal?", "What recipe did you propose for feeding my coworkers?"},
		near: []string{"Potlucks always end up with five desserts and no mains.",
			"How do I keep food warm when I'm carrying it across town?"}},
	{kind: kindAssistant, topic: "money", values: []string{"50/30/20", "70/20/10", "60/20/20"},
		tell: [][]string{{
			"How should I split my salary between bills, fun and savings? I've never had a budget.",
			"I get paid on the 25th and it's gone by the 10th. How do I divide it up sensibly?",
		}},
		reply: [][]string{{"A simple place to start is the {v} rule: needs, wants and savings, in that order of percentages.", "Try the {v} split for a couple of months, then adjust once you see where the money actually goes."}},
		ask:   []string{"How did you suggest I split my salary?", "What budgeting rule did you tell me about?", "which percentages did you suggest for my paycheck"},
		near: []string{"My bank started charging for paper statements.",
			"Is it worth switching banks for a sign-up bonus?"}},
	{kind: kindAssistant, topic: "gardening", values: []string{"snake plant", "ZZ plant", "pothos", "cast-iron plant"},
		tell: [][]string{{
			"Which houseplant would survive in a bathroom with almost no window?",
			"I want something green in the hallway but it gets hardly any daylight. What would live there?",
		}},
		reply: [][]string{{"A {v} is your best bet: it tolerates low light and forgets-to-water owners.", "Go for a {v}. It's nearly impossible to kill and copes with dim corners."}},
		ask:   []string{"Which houseplant did you recommend for low light?", "What greenery did you say could cope with my dark room?", "Which species did you recommend for the spot without sun?"},
		near: []string{"My basil keeps wilting on the balcony no matter what I do.",
			"Are orchids really as hard to keep as people say?"}},
	{kind: kindAssistant, topic: "tech", values: []string{"Python", "Google Apps Script", "VBA"},
		tell: [][]string{{
			"I want to automate some boring spreadsheet work at my job. Which programming language should I learn first?",
			"Half my week is copying numbers between Excel files. What should I learn to stop doing that by hand?",
		}},
		reply: [][]string{{"I'd start with {v}: it's made for exactly this, and there are plenty of beginner examples.", "Learn {v}. You'll automate your first report within a couple of weekends."}},
		ask:   []string{"Which programming language did you suggest for automating spreadsheets?", "Which coding language did you suggest I pick up?", "what did you advise me to learn for my office tasks"},
		near: []string{"My laptop fan is really loud when I have lots of tabs open.",
			"Should I learn touch typing or is it too late?"}},
	{kind: kindAssistant, topic: "travel", values: []string{"Trastevere", "Monti", "Prati", "Campo de' Fiori"},
		tell: [][]string{{
			"We're spending three days in Rome in April. Which neighbourhood should we stay in?",
			"First time in Rome soon! Where's a nice area to book a hotel?",
		}},
		reply: [][]string{{"Stay in {v}: it's walkable, full of good restaurants and calmer in the evenings than the very centre.", "I'd book in {v}. You can walk to most sights and it has a real neighbourhood feel."}},
		ask:   []string{"Which Rome neighbourhood did you recommend?", "Which area of the Italian capital did you recommend for our stay?", "where did you say we should sleep on our city break"},
		near: []string{"Do I need a visa for a weekend in Switzerland?",
			"My friend says April is too crowded everywhere in Europe."}},

	// Preferences: the question asks for a suggestion that should follow them.
	{kind: kindPreference, topic: "cooking", values: []string{"vegetarian", "vegan", "pescatarian"},
		tell: [][]string{{
			"Just so you know for the future: I've been {v} for three years now.",
			"I'm hosting my in-laws, which is tricky because I'm {v} and they're big meat eaters.",
		}},
		reply: [][]string{{"Thanks, I'll keep that in mind for any food ideas.", "That can work well; plenty of dishes please everyone."}},
		ask:   []string{"Can you suggest a recipe I'd like for my in-laws?", "Can you suggest something for dinner tonight?", "What should I cook for friends this weekend?"},
		near: []string{"My dad only eats steak and potatoes, it makes birthdays hard.",
			"Is it true that cast iron pans make food taste better?"}},
	{kind: kindPreference, topic: "cooking", values: []string{"an oat milk latte", "a flat white with extra milk", "a vanilla cappuccino"},
		tell: [][]string{{
			"I can't stand bitter coffee, so I always order {v}.",
			"My barista knows me by now, it's {v} every single morning.",
		}},
		reply: [][]string{{"Sounds like a comforting routine.", "Nothing wrong with knowing what you like!"}},
		ask:   []string{"What coffee should I order?", "What should I get at the café?", "Any idea what drink I'd enjoy at the new coffee place?"},
		near: []string{"Is four espressos a day too many?",
			"My office finally got a decent coffee machine."}},
	{kind: kindPreference, topic: "travel", values: []string{"hiking in the mountains", "wandering old towns and museums", "camping somewhere remote"},
		tell: [][]string{{
			"Beach resorts bore me to tears; I'd much rather spend a holiday {v}.",
			"Honestly my favourite trips have all been about {v}, lying by a pool isn't for me.",
		}},
		reply: [][]string{{"That's useful to know for planning trips.", "Everyone recharges differently; that sounds like your kind of break."}},
		ask:   []string{"Any holiday ideas for me that aren't a beach resort?", "Where should I go on vacation this summer?", "Can you recommend a getaway for my time off?"},
		near: []string{"My friends all want to go to Ibiza for a week.",
			"How early should I book summer flights?"}},
	{kind: kindPreference, topic: "fitness", values: []string{"outdoors on a trail", "at home with a yoga mat", "in the pool"},
		tell: [][]string{{
			"Gyms make me really self-conscious, I'd much rather exercise {v}.",
			"I cancelled my gym membership; I'm happiest working out {v}.",
		}},
		reply: [][]string{{"That's completely fine, the best exercise is the one you enjoy.", "Plenty of people feel that way, and you can get very fit without a gym."}},
		ask:   []string{"Can you suggest a workout plan I'd actually enjoy?", "Suggest a routine to get in shape.", "What sort of training plan would suit me?"},
		near: []string{"My colleague lifts weights six days a week, is that too much?",
			"Are fitness trackers accurate for calories?"}},
	{kind: kindPreference, topic: "tech", values: []string{"DaVinci Resolve", "Adobe Premiere", "Final Cut Pro"},
		tell: [][]string{{
			"I cut all my travel videos in {v} and I really don't want to switch software.",
			"I've spent years learning {v}, so that's what I use for every video project.",
		}},
		reply: [][]string{{"It makes sense to stick with what you know.", "Knowing one tool deeply beats switching around."}},
		ask:   []string{"Which video editing tutorials would suit me?", "Can you recommend some tutorials to improve my editing?", "Any learning resources for my film projects?"},
		near: []string{"My phone's camera is better than my old DSLR now.",
			"What's a good microphone for recording voiceovers?"}},
	{kind: kindPreference, topic: "books", values: []string{"audiobooks on my commute", "ebooks on my Kindle", "graphic novels"},
		tell: [][]string{{
			"These days I almost only get through {v}; I rarely sit down with a paper book.",
			"My reading habit has changed a lot, it's mostly {v} now.",
		}},
		reply: [][]string{{"Whatever format keeps you reading is the right one.", "That's a great way to fit reading into a busy life."}},
		ask:   []string{"Can you suggest a book for me?", "Any good suggestions for what to read next?", "What could I try after finishing my current story?"},
		near: []string{"My book club picked a 900-page novel, I'll never finish it.",
			"Are libraries still worth joining?"}},

	// Multi-session: 2 to 4 parts over as many sessions.
	{kind: kindMulti, topic: "books", minParts: 2, values: []string{"Dune|Circe|Beloved|Middlemarch", "Rebecca|Piranesi|Normal People|Shogun"},
		tell: [][]string{{
			"Finished {v} last night, what an ending.",
			"I just turned the last page of {v}, I stayed up far too late.",
			"Done with {v}, took me just over a week.",
		}},
		reply: [][]string{{"Finishing a good book late at night is the best feeling.", "Well done! What did you think of it?"}},
		ask:   []string{"How many books have I finished?", "How many novels have I completed recently?", "Which stories have I read to the end lately?"},
		near: []string{"I keep buying books faster than I read them.",
			"My partner reads three books at once, how is that possible?"}},
	{kind: kindMulti, topic: "travel", minParts: 2, values: []string{"Denver|Austin|Toronto|Chicago", "Madrid|Paris|Milan|Lisbon", "Seattle|Boston|Atlanta|Dallas"},
		tell: [][]string{{
			"Back from a work trip to {v}; the client meeting went fine.",
			"I fly to {v} on Monday for a customer workshop, third one this quarter.",
			"Just landed in {v} for the quarterly meeting with our partners.",
		}},
		reply: [][]string{{"Glad that went well, business trips are tiring.", "Safe travels, and try to get some sleep on the way."}},
		ask:   []string{"Where have my work trips taken me?", "Which cities have I visited for business?", "How many times have I travelled for my job?"},
		near: []string{"I love travelling but airports are exhausting.",
			"My company changed its expense policy for hotels."}},
	{kind: kindMulti, topic: "money", minParts: 2, values: []string{"a guitar|a road bike|a camera|a standing desk", "a kayak|a sewing machine|a record player|an armchair"},
		tell: [][]string{{
			"Picked up {v} second-hand this week, an absolute bargain.",
			"Found {v} on a local marketplace for a third of the shop price.",
		}},
		reply: [][]string{{"Nice find! Second-hand is great value.", "That's a great deal, and better for the planet too."}},
		ask:   []string{"What have I bought second-hand?", "How many used items have I bought?", "What have I got pre-owned so far?"},
		near: []string{"I should really declutter the garage before buying anything else.",
			"Online marketplaces are full of scams lately."}},
	{kind: kindMulti, topic: "hobbies", minParts: 2, values: []string{"Coldplay|Arctic Monkeys|Lizzo|Hozier", "Adele|Radiohead|Billie Eilish|The National"},
		tell: [][]string{{
			"We saw {v} live on Friday, the crowd was amazing.",
			"Still buzzing from the {v} gig last night.",
		}},
		reply: [][]string{{"That sounds like an unforgettable night.", "Live music is the best. Was it a big venue?"}},
		ask:   []string{"Which bands have I seen live?", "Which artists have I seen perform?", "How many concerts have I been to?"},
		near: []string{"Ticket prices for shows are out of control now.",
			"My neighbour plays drums at 11pm."}},
	{kind: kindMulti, topic: "gardening", minParts: 2, values: []string{"tomatoes|lavender|strawberries|chillies", "courgettes|mint|sunflowers|runner beans"},
		tell: [][]string{{
			"Added {v} to the balcony today, it's getting crowded out there.",
			"Planted {v} in the raised bed this morning.",
		}},
		reply: [][]string{{"Your garden is coming along nicely.", "Good timing for that, they should do well."}},
		ask:   []string{"What have I planted on the balcony or in the raised bed?", "What have I been growing outside?", "How many kinds of crops have I put in this season?"},
		near: []string{"Slugs ate half my neighbour's lettuces.",
			"Is it worth buying a greenhouse?"}},
	{kind: kindMulti, topic: "family", minParts: 2, values: []string{"the food bank|the animal shelter|a beach clean-up|the library's reading club"},
		tell: [][]string{{
			"Spent Saturday volunteering at {v}, tiring but worth it.",
			"I helped out at {v} this weekend, they're always short of people.",
		}},
		reply: [][]string{{"That's a generous way to spend a weekend.", "Good for you, those places rely on people like you."}},
		ask:   []string{"Where have I volunteered?", "Where have I done unpaid community work?", "How many charity causes have I given my time to?"},
		near: []string{"My company gives us two days a year for good causes.",
			"Is donating money better than giving time?"}},
	{kind: kindMulti, topic: "health", minParts: 2, values: []string{"dermatologist|physiotherapist|eye doctor|cardiologist"},
		tell: [][]string{{
			"Had my appointment with the {v} this morning, nothing serious.",
			"The {v} finally saw me today after a two-month wait.",
		}},
		reply: [][]string{{"Glad it wasn't serious.", "Waiting that long is stressful, good that you've been seen."}},
		ask:   []string{"Which appointments have I had with specialists?", "How many specialists have I seen?", "Which medical experts did I visit?"},
		near: []string{"The waiting list at my GP is six weeks now.",
			"Is it worth paying for private health insurance?"}},
	{kind: kindMulti, topic: "fitness", minParts: 2, values: []string{"a 5K fun run|a 10K in the park|the half marathon|a trail race"},
		tell: [][]string{{
			"Ran {v} on Sunday and finished in one piece!",
			"Crossed the line at {v} this morning, legs are jelly.",
		}},
		reply: [][]string{{"Congratulations, that's a real achievement!", "Well done! Rest and eat well today."}},
		ask:   []string{"How many runs or races have I finished?", "How many races have I taken part in?", "Which running events did I enter?"},
		near: []string{"My knee twinges on downhill stretches.",
			"Are expensive trainers worth it?"}},

	// Knowledge updates: the latest part is the answer.
	{kind: kindUpdate, topic: "home", values: []string{"Oakland|Portland", "Leeds|Bristol|Cardiff", "Lyon|Nantes"},
		tell: [][]string{
			{"We're moving! We signed a lease on a flat in {v}.", "Big step: we're relocating to {v} at the end of the month."},
			{"Change of plans, the job moved, so we've moved again and now live in {v}.", "Unpacked the last boxes in our new place in {v}, another move done."},
		},
		reply: [][]string{{"Moving is a big step, good luck with the boxes.", "Exciting! New places take a while to feel like home."}},
		ask:   []string{"Where do we live now after moving?", "Which city is home for me at the moment?", "Where am I currently based?"},
		near: []string{"House prices around here are ridiculous.",
			"Our landlord finally fixed the heating."}},
	{kind: kindUpdate, topic: "fitness", values: []string{"27:40|26:15|25:02", "31:10|29:45"},
		tell: [][]string{
			{"My best 5K is now {v}, I'm pretty proud.", "Timed a parkrun at {v} today, my best so far."},
			{"New personal record: {v} over five kilometres this morning!", "Smashed it, {v} for the 5K, a whole minute faster."},
		},
		reply: [][]string{{"That's a great time, well done!", "Progress like that comes from consistent training."}},
		ask:   []string{"What's my best 5K time?", "What's my current fastest time for that distance?", "How quick is my running record now?"},
		near: []string{"I skipped running all week because of the rain.",
			"How do runners keep their pace steady?"}},
	{kind: kindUpdate, topic: "work", values: []string{"Priya|Marco|Helen", "Daniel|Sofia"},
		tell: [][]string{
			{"My manager is {v}, she's tough but fair.", "I'll be reporting to {v} from now on."},
			{"Reorg again: from this week I report to {v}.", "They moved me to a new team, my boss is {v} now."},
		},
		reply: [][]string{{"A new manager takes some getting used to.", "Reorganisations are unsettling; give it a few weeks."}},
		ask:   []string{"Who do I report to now?", "Who is my boss now?", "who do I answer to at work these days"},
		near: []string{"My team lead is leaving for another company.",
			"How do I have a good one-to-one meeting?"}},
	{kind: kindUpdate, topic: "tech", values: []string{"Vodafone|O2|Three", "T-Mobile|Verizon"},
		tell: [][]string{
			{"I'm with {v} for my phone contract, the signal at home is okay.", "Signed a two-year plan with {v}."},
			{"Switched my mobile plan to {v}, it's half the price.", "Ported my number to {v} today, the old network was useless."},
		},
		reply: [][]string{{"Good to have that sorted.", "Switching networks is easier than people think."}},
		ask:   []string{"Which phone plan am I on now?", "Which carrier am I with currently?", "who provides my cell service now"},
		near: []string{"My phone battery dies by 3pm.",
			"Is it worth buying the newest phone model?"}},
	{kind: kindUpdate, topic: "health", values: []string{"6,000|8,000|10,000", "7,500|12,000"},
		tell: [][]string{
			{"I set my daily step goal to {v} on my watch.", "My target is {v} steps a day for now."},
			{"Raised my step target to {v} a day, the old one got too easy.", "I bumped the walking goal on my tracker up to {v}."},
		},
		reply: [][]string{{"A daily goal is a great motivator.", "Nice progress, increasing it gradually is the right way."}},
		ask:   []string{"What's my daily step goal?", "How much am I aiming to walk every day now?", "what's my present daily movement target"},
		near: []string{"My watch says I slept badly again.",
			"Do standing desks actually help?"}},
	{kind: kindUpdate, topic: "money", values: []string{"$12,000|$18,500|$25,000", "£9,000|£14,000"},
		tell: [][]string{
			{"We've saved {v} towards the house deposit so far.", "The house fund stands at {v}."},
			{"The deposit pot is up to {v} now!", "Another good month, we've put away {v} for the house."},
		},
		reply: [][]string{{"That's a great start.", "Steady progress, you'll get there."}},
		ask:   []string{"How much have we saved for the house deposit?", "How much money have we put aside for buying a home?", "What's our current total for the property down payment?"},
		near: []string{"Mortgage rates went up again.",
			"Should we buy a flat or wait another year?"}},

	// Temporal: when something happened, or which came first.
	{kind: kindTemporal, topic: "health", values: []string{"x|y"},
		tell: [][]string{
			{"Got my flu jab at the pharmacy today, my arm is sore.", "Finally had the flu vaccine this morning."},
			{"Booked the car in for its annual service today, it took all afternoon.", "The car went in for its yearly check-up and needs new brake pads."},
		},
		reply: [][]string{{"Good that it's done.", "One less thing on the list."}},
		ask:   []string{"Which came first, my flu jab or the car service?", "Which did I do earlier, the vaccination or the vehicle maintenance?", "what happened first: my shot or the garage visit"},
		near: []string{"Everyone at work seems to have a cold.",
			"How often should tyres be replaced?"}},
	{kind: kindTemporal, topic: "home", values: []string{"x|y"},
		tell: [][]string{
			{"We painted the garden fence this afternoon, it looks brand new.", "Spent the day repainting the fence dark green."},
			{"The new sofa was delivered today, it's huge.", "Our corner couch finally arrived this morning."},
		},
		reply: [][]string{{"That must feel satisfying.", "Nice, enjoy it!"}},
		ask:   []string{"Did we paint the fence before the sofa arrived?", "What came first, the outdoor decorating or the furniture delivery?", "Did the settee arrive before or after we did the woodwork outside?"},
		near: []string{"Our neighbours are having their roof redone.",
			"How do I get paint out of a carpet?"}},
	{kind: kindTemporal, topic: "fitness", values: []string{"salsa", "boxing", "pilates"},
		tell: [][]string{{
			"Went to my first {v} class tonight, I'm hooked.",
			"Tried a {v} lesson today for the first time, harder than it looks.",
		}},
		reply: [][]string{{"First classes are always the hardest, well done.", "Great that you enjoyed it, keep going!"}},
		ask:   []string{"When was my first {v} class?", "When did I start going to {v}?", "How long ago was my first {v} session?"},
		near: []string{"The leisure centre changed its timetable again.",
			"Is it normal to be sore two days after exercise?"}},
	{kind: kindTemporal, topic: "travel", values: []string{"x"},
		tell: [][]string{{
			"I passed my driving test this morning, on the third attempt!",
			"Finally got my licence today, the examiner was lovely.",
		}},
		reply: [][]string{{"Congratulations, that's a big milestone!", "Well done, third time lucky!"}},
		ask:   []string{"When did I pass my driving test?", "When did I qualify to drive?", "how long have I had my driver's permit"},
		near: []string{"My brother is terrified of motorways.",
			"Are automatic cars easier for beginners?"}},
	{kind: kindTemporal, topic: "travel", values: []string{"Bali", "Santorini", "the Amalfi Coast", "Costa Rica"},
		tell: [][]string{{
			"We got back from our honeymoon in {v} today, already missing it.",
			"Home from {v} after the wedding trip, unpacking sand from everything.",
		}},
		reply: [][]string{{"Welcome back, it sounds like a wonderful trip.", "Post-holiday blues are real, give yourself a slow week."}},
		ask:   []string{"When did we get back from our honeymoon?", "How many weeks ago did I return from the trip after getting married?", "When did we come back from {v}?"},
		near: []string{"My parents went on a cruise for their anniversary.",
			"What's a good way to keep holiday photos organised?"}},
	{kind: kindTemporal, topic: "work", values: []string{"x|y"},
		tell: [][]string{
			{"Today was my last day at the old company, they gave me a card and a cake.", "Handed in my laptop and badge today, that's the end of my old job."},
			{"First day in the new job today, so many names to learn.", "Started at the new place this morning, onboarding all day."},
		},
		reply: [][]string{{"That's a big moment.", "Exciting times."}},
		ask:   []string{"How long between my last day at the old company and my first day in the new job?", "How many days were there between leaving my previous employer and beginning the next role?", "how long was my break between positions"},
		near: []string{"A friend was made redundant last month.",
			"How long should a notice period be?"}},
	{kind: kindTemporal, topic: "family", values: []string{"x"},
		tell: [][]string{{
			"My parents came to stay this weekend, the flat felt tiny with four of us.",
			"Mum and Dad visited for three days, we took them to the seaside.",
		}},
		reply: [][]string{{"Family visits are lovely but tiring.", "Sounds like a nice few days together."}},
		ask:   []string{"When did my parents come to stay?", "When did my mother and father last come over?", "when was the most recent visit from my folks"},
		near: []string{"My friend's parents moved in with her for a month.",
			"How do I make a guest bed more comfortable?"}},
	{kind: kindTemporal, topic: "hobbies", values: []string{"x|y"},
		tell: [][]string{
			{"I bought my first proper camera today, a second-hand mirrorless one.", "Treated myself to a camera for street photography."},
			{"Joined the local photo club tonight, everyone was welcoming.", "Went to my first meeting of the photography society."},
		},
		reply: [][]string{{"What a good step for your hobby.", "That will push your photography along."}},
		ask:   []string{"Did I buy my camera before or after joining the photo club?", "Did I get the new lens gear before or after joining the group?", "what did I do first, buy equipment or sign up to the club"},
		near: []string{"My phone is full of blurry pictures.",
			"What's the best time of day for outdoor photos?"}},
}
