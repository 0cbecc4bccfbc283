package retrieval

import (
	"fmt"
	"math/rand/v2"
)

// chatTopic is small talk two friends make about one thing: statements,
// questions to the other and answers to them. Words in braces are slots
// ([peopleSlots]) filled at random, so the same template rarely gives the
// same sentence twice.
type chatTopic struct {
	says, asks, answers []string
}

// chatTopics are the people set's small-talk topics, by name; facts name
// theirs, so their distractor sessions talk about the same things.
var chatTopics = map[string]chatTopic{
	"weather": {
		says: []string{"The weather has been {weather} all week and I've given up on my {thing}.",
			"It was so {weather} {when} that I stayed in with {drink} and a blanket.",
			"They say it'll be {weather} again on {day}, so my plans for {place} are off.",
			"I got soaked walking back from {place}, my shoes are still drying by the radiator.",
			"First proper sunny day {when}, and the whole town was out at {place}.",
			"The wind took my umbrella clean out of my hand outside {place}."},
		asks: []string{"Has it been {weather} where you are too?", "Did you get caught in that storm {when}?", "Are you a summer person or a winter person?"},
		answers: []string{"Grey and miserable here, the usual.", "We had hail {when}, in this month, can you believe it?",
			"Winter, always. I love an excuse for thick socks.", "It's been oddly {weather}, I don't trust it."},
	},
	"tv": {
		says: []string{"I started {show} {when} and watched {num} episodes in one go.",
			"Everyone at work keeps talking about {show}, so I finally gave in.",
			"{show} has the most ridiculous cliffhangers, I'm furious and delighted.",
			"I fell asleep during {show} and woke up to the credits of something else entirely.",
			"My {family} made me watch {show} and I hate to admit it's good.",
			"I rewatched an old sitcom {when} and the jokes have aged like milk."},
		asks: []string{"Have you watched anything good lately?", "Are you still watching {show}?", "Do you have any recommendations for {day} night?"},
		answers: []string{"Honestly I've been watching cooking competitions on a loop.", "I'm halfway through {show}, no spoilers please!",
			"Nothing new, I just rewatch the same comfort shows.", "Try {show}, it sounds silly but it's brilliant."},
	},
	"sleep": {
		says: []string{"I slept about {num} hours {when} and I'm running on {drink}.",
			"I've been trying to go to bed before eleven, it lasts about {num} days each time.",
			"Woke up at four for no reason and lay there thinking about an email from {month}.",
			"I had a nap {when} and woke up with no idea what year it was.",
			"My {family} snores like a leaf blower, so I'm sleeping in the spare room."},
		asks: []string{"Are you sleeping any better?", "Are you a morning person?", "How do you wind down at night?"},
		answers: []string{"A bit, I've banned my phone from the bedroom.", "Absolutely not, I'm useless before ten.",
			"A podcast and a cup of {drink}, usually.", "Badly, but I'm used to it now."},
	},
	"tech": {
		says: []string{"My phone updated itself {when} and now nothing is where it used to be.",
			"The laptop fan sounds like a jet engine whenever I open more than {num} tabs.",
			"I spent an hour on hold with the internet company and they hung up on me.",
			"I finally backed up my photos; there were {num} thousand pictures of {food}.",
			"My {family} sent me a voice note that was eleven minutes long."},
		asks: []string{"Do you know anything about printers?", "Have you tried that new {app} everyone's using?", "Is your phone as slow as mine?"},
		answers: []string{"Only that they sense fear.", "I deleted it after a day, too many notifications.",
			"Mine takes a full minute to open the camera.", "I have to restart my router every morning like a ritual."},
	},
	"news": {
		says: []string{"They're finally fixing the potholes on {street}, only took them three years.",
			"There's a new {shop} opening where the old bank used to be.",
			"The local paper ran a front page about a runaway {animal} {when}.",
			"The council wants to close {place} on weekends, and people are furious.",
			"Apparently they're filming a movie down by {place} next month."},
		asks: []string{"Did you hear about the fire near {place}?", "Have you seen what they're building on {street}?", "Do you still read the local paper?"},
		answers: []string{"I did! Thankfully nobody was hurt.", "More flats, I think, and no parking, obviously.",
			"Only the letters page, it's better than television.", "No, what happened?"},
	},
	"weekend": {
		says: []string{"This weekend was lovely and slow: {food}, a walk to {place}, early night.",
			"I did absolutely nothing on {day} and I refuse to feel guilty.",
			"{friend} dragged me to {place} on {day}; it was better than I expected.",
			"Spent {day} reorganising my {thing} drawer, living the dream.",
			"We had {friend} over {when} and stayed up far too late talking."},
		asks: []string{"Any plans for the weekend?", "What did you get up to on {day}?", "Do you want to meet up at {place} sometime?"},
		answers: []string{"Nothing yet, which is exactly how I like it.", "Mostly errands, and a long lunch with {friend}.",
			"I'd love that, let's pick a date.", "Laundry and pretending to tidy, honestly."},
	},
	"coffee": {
		says: []string{"The café by {place} started doing {drink} with oat milk and I'm there every day.",
			"I've cut down to {num} coffees a day, which is basically a personality change.",
			"Someone took my mug from the office kitchen and I'm investigating.",
			"I tried {drink} with cardamom {when} and now nothing else will do.",
			"The barista knows my order now, which is either lovely or a warning sign."},
		asks: []string{"Are you still off caffeine?", "Have you tried the new place on {street}?", "Tea or coffee, be honest?"},
		answers: []string{"Sort of. Decaf counts, right?", "Yes! Their pastries are dangerous.",
			"Tea in the morning, coffee after lunch, chaos after four.", "Not yet, is it any good?"},
	},
	"shopping": {
		says: []string{"I went in for {food} and came out with {num} bags and no {food}.",
			"The supermarket self-checkout told me there was an unexpected item, which was my hand.",
			"I found a {colour} coat in a charity shop for six pounds, I'm thrilled.",
			"Online shopping at midnight is a terrible habit and I regret the lamp.",
			"The market on {day} had {food} so cheap I bought far too much."},
		asks: []string{"Where do you buy your groceries these days?", "Have you been to the market on {street}?", "Do you ever return things or just keep them?"},
		answers: []string{"Wherever is closest, I'm not proud.", "Yes, the cheese stall is worth the trip alone.",
			"I keep them, the post office queue is too long.", "I've started doing one big shop on {day}."},
	},
	"money": {
		says: []string{"The energy bill came {when} and I had to sit down.",
			"I'm trying a no-spend month, it's day {num} and I've already failed twice.",
			"My bank app tells me how much I spend on {food} and it's very judgemental.",
			"Prices at {shop} have gone up again, I swear a sandwich costs the same as a book now.",
			"I cancelled {num} subscriptions I forgot I had."},
		asks: []string{"How do you keep track of your spending?", "Did your rent go up too?", "Are you saving for anything?"},
		answers: []string{"A spreadsheet I look at once a year.", "Yes, by far too much, and nothing got fixed.",
			"Trying to, but life keeps happening.", "Badly. I check my balance with one eye closed."},
	},
	"commute": {
		says: []string{"The bus was {num} minutes late {when} and then two came at once.",
			"Someone on the train ate {food} at eight in the morning, a bold choice.",
			"I've started cycling to work; I arrive sweaty but smug.",
			"The roadworks on {street} have turned a ten-minute drive into an odyssey.",
			"I missed my stop because I was reading, again."},
		asks: []string{"How's your commute these days?", "Are you still working from home some days?", "Do you drive in or take the train?"},
		answers: []string{"Long, but I've got a good podcast going.", "Two days at home, three in the office.",
			"Train, when it runs.", "I walk, it's the only exercise I get."},
	},
	"music": {
		says: []string{"I've had the same song on repeat since {day}, send help.",
			"{friend} made me a playlist and it's all sea shanties.",
			"I found my old CDs in the loft {when}; my teenage taste was questionable.",
			"There's a busker outside {place} who plays the accordion really well.",
			"I sang in the car so loudly at a red light that the driver next to me clapped.",
			"The radio played my {family}'s favourite song {when} and I had to pull over for a minute."},
		asks: []string{"What are you listening to at the moment?", "Do you still sing in the shower?", "Have you been to any gigs lately?"},
		answers: []string{"Old soul records, mostly.", "Every single morning, the neighbours love it.",
			"Not in ages, tickets are so expensive.", "Whatever my {family} puts on, I've lost control."},
	},
	"pets": {
		says: []string{"My neighbour's {animal} has decided our doorstep is its home.",
			"The cat next door brought me a leaf as a present {when}.",
			"Someone at {place} had a {animal} on a lead, and I have questions.",
			"I watched a video of a goat on a trampoline {num} times.",
			"The vet's waiting room {when} was pure chaos, a parrot was swearing.",
			"A {animal} escaped from the petting farm near {place} and made the local news."},
		asks: []string{"Are you more of a cat person or a dog person?", "Did you have pets growing up?", "Have you seen the ducks at {place}?"},
		answers: []string{"Dogs, but cats seem to like me more.", "A hamster called Biscuit, rest in peace.",
			"Yes, there are ducklings now!", "Neither, I'm a houseplant person."},
	},
	"work": {
		says: []string{"Work was {feel} today, I answered {num} emails and achieved nothing.",
			"Our team had an away day at {place}, there were trust exercises.",
			"The office {appliance} broke {when} and productivity fell off a cliff.",
			"{boss} says 'quick question' and then talks for forty minutes.",
			"{boss} booked a meeting called 'sync' for {day} at half five, which is a crime.",
			"Someone microwaved {food} in the office kitchen {when} and the whole floor knows about it.",
			"I finally cleared my inbox {when}, and then {num} more arrived."},
		asks: []string{"How's work treating you?", "Is your boss still micromanaging?", "Are you taking any time off soon?"},
		answers: []string{"Busy, but the good kind of busy.", "Less, since I started sending her updates before she asks.",
			"A long weekend in {month}, fingers crossed.", "It's fine, I'm counting down to Friday."},
	},
	"family": {
		says: []string{"My {family} called {when} to ask how to send a photo, for the fifth time.",
			"We had a big family lunch on {day}, three hours and {num} arguments about nothing.",
			"My {family} is redecorating and keeps sending me pictures of paint samples.",
			"My {kid} told me {when} that I'm 'old but fun', which I'm taking as a compliment.",
			"My {family} rang at seven on {day} morning to ask if I'd seen the news about {place}.",
			"We're planning a surprise party for my {family} and {num} people already know, so it's hardly a surprise.",
			"My {family} has taken up {hobby} and is suddenly an expert."},
		asks: []string{"How's your family doing?", "Are you seeing your parents soon?", "Is your {family} still on that diet?"},
		answers: []string{"Everyone's well, thanks, just busy.", "Next month, for my dad's birthday.",
			"Officially yes, unofficially there's cake.", "Same as ever, loud and lovely."},
	},
	"books": {
		says: []string{"I'm reading a thriller set in {city} and I stayed up till one to finish it.",
			"The library has a tiny café now, I could live there.",
			"I bought a book because of its cover {when}, and it was terrible.",
			"{friend} lent me a book of poems and I'm rationing one a day.",
			"I've been listening to audiobooks on walks, it feels like cheating.",
			"I left a library book on the bus {when}, so I owe {num} pounds and an apology."},
		asks: []string{"Read anything good lately?", "Do you still go to the library?", "Paper books or e-reader?"},
		answers: []string{"A memoir about a lighthouse keeper, oddly gripping.", "Every Saturday, it's my quiet place.",
			"Paper, I like the smell, which sounds pretentious.", "I'm stuck in the middle of a very long one."},
	},
	"food": {
		says: []string{"I had the best {food} of my life at a little place near {place}.",
			"I made {food} {when} and it came out looking like a science experiment.",
			"We ordered {food} and it arrived an hour late and cold, still ate it.",
			"My {family} sent me home with {num} containers of {food}, I'm set for the week.",
			"I'm trying to eat more vegetables, so I put spinach on my {food}.",
			"{friend} brought homemade {food} to work {when} and it was gone in ten minutes.",
			"There's a new stall at {place} doing {food} and the queue goes round the corner."},
		asks: []string{"What did you have for dinner?", "Have you tried that {food} place on {street}?", "Do you cook much during the week?"},
		answers: []string{"Toast. I'm a culinary genius.", "Yes! The portions are enormous.",
			"Not really, it's mostly pasta and good intentions.", "{food}, again, no regrets."},
	},
	"errands": {
		says: []string{"I spent {day} morning at the post office behind a man sending {num} parcels.",
			"The dry cleaner lost my {colour} shirt and offered me a voucher.",
			"Renewing my passport is a full-time job, the photo alone took {num} tries.",
			"I finally fixed the wobbly {thing}, with a folded-up receipt.",
			"The recycling schedule changed and the whole street put bins out on the wrong day.",
			"I queued at the bank on {day} for {num} minutes to change one address."},
		asks: []string{"Have you got a lot on this week?", "Do you know a good plumber?", "Did you ever sort out that parking permit?"},
		answers: []string{"Just the usual pile of life admin.", "My cousin knows one, I'll send you the number.",
			"Eventually, after three forms and a phone call.", "Too much, and all of it boring."},
	},
	"travel": {
		says: []string{"I spent my lunch break looking at flights to {city} I will never book.",
			"The airport in {city} has a piano, and someone played it beautifully.",
			"I packed for a weekend away with {num} jumpers and no socks.",
			"We took the night train once, and I want to do it again.",
			"{friend} is back from {city} with a tan and a lot of opinions.",
			"I found a guidebook to {city} from 1998 in a charity shop, half the places have closed."},
		asks: []string{"Any holidays planned this year?", "Have you ever been to {city}?", "Window or aisle seat?"},
		answers: []string{"Maybe something small in {month}.", "Once, years ago, it rained the whole time.",
			"Window, always, I like to watch the clouds.", "Nothing booked, just daydreams."},
	},
	"community": {
		says: []string{"There's a street party on {street} on {day}, with bunting and everything.",
			"The neighbourhood group chat is arguing about a lost {animal} again.",
			"Someone set up a little free library outside {place}.",
			"The community hall is doing a quiz night and {friend} wants me on the team.",
			"Our neighbour leaves courgettes on everyone's doorstep every summer.",
			"The café at {place} is collecting coats for the winter appeal, I dropped off {num}."},
		asks: []string{"Do you know your neighbours well?", "Are you going to the fair at {place}?", "Is your street as noisy as mine?"},
		answers: []string{"Only to wave at, but they seem nice.", "Probably, if the weather holds.",
			"Worse, there's a man who mows his lawn at seven.", "A couple of them, we swap keys."},
	},
	"health": {
		says: []string{"I've had a cold since {day} and my voice sounds like a foghorn.",
			"Went to the dentist {when}, no fillings, I felt like a winner.",
			"I'm trying to drink more water and mostly I just need the loo.",
			"The pharmacy on {street} gave me the wrong prescription {when}, luckily I checked.",
			"I walked {num} thousand steps on {day}, my watch threw me a little party.",
			"My back has been stiff since I moved the {thing}, I'm falling apart.",
			"I did a yoga video {when} and discovered muscles I didn't know I had."},
		asks: []string{"How are you feeling these days?", "Did you ever get that checked?", "Are you still doing yoga?"},
		answers: []string{"Better, the cough's nearly gone.", "Yes, all clear, thankfully.",
			"When I remember, which is once a week.", "Tired, but who isn't."},
	},
	"sport": {
		says: []string{"Our team lost {num}-nil on {day}, and I've decided not to talk about it.",
			"I joined a five-a-side game {when} and touched the ball twice.",
			"The gym was packed {when}, the new year crowd has arrived.",
			"I watched the tennis final with {friend} and we both shouted at the screen.",
			"I tried climbing at the wall near {place}; my arms are useless today.",
			"The swimming pool at {place} reopened {when} and the water is somehow colder."},
		asks: []string{"Did you watch the match?", "Are you still going to the gym?", "Do you want to try the climbing wall with me?"},
		answers: []string{"Only the second half, it was painful.", "Twice a week, when I'm strong-willed.",
			"Yes! As long as you don't laugh.", "I'm more of a sofa athlete."},
	},
	"hobbies": {
		says: []string{"I started a jigsaw with {num} pieces, and half of them are sky.",
			"{friend} talked me into {hobby}, and I'm annoyingly bad at it.",
			"My {family} gave me a sewing machine, so far I've hemmed one curtain.",
			"I've been keeping a sketchbook on the train, mostly of people's shoes.",
			"I tried {hobby} {when} and understood why people get obsessed.",
			"There's a {hobby} club that meets at {place} on {day}s and I keep almost going."},
		asks: []string{"Have you picked up any new hobbies?", "Are you still doing {hobby}?", "What do you do to switch off?"},
		answers: []string{"Does scrolling count?", "On and off, mostly off lately.",
			"Long baths and crosswords.", "I've been trying {hobby}, slowly."},
	},
	"home": {
		says: []string{"The boiler made a noise like a dying whale {when}.",
			"I bought a plant to brighten the {room} and it's already sulking.",
			"We finally hung the pictures in the {room}, only took a year.",
			"I cleaned behind the fridge and found {num} magnets and a fossilised grape.",
			"The neighbours are renovating, so it's drilling from eight every morning.",
			"The {appliance} finally gave up {when}, so we're living like it's 1850.",
			"I put up a shelf in the {room} and it's only slightly wonky."},
		asks: []string{"Is your landlord still ignoring the leak?", "Do you like living where you are?", "Any luck with the damp in the {room}?"},
		answers: []string{"He sent a man who looked at it and left.", "I love the area, the flat less so.",
			"A bit, I bought one of those dehumidifiers.", "It's home, creaky floor and all."},
	},
	"social": {
		says: []string{"{friend} is turning forty and wants a party at {place}, fancy dress.",
			"I bumped into an old school friend at {place} and we talked for an hour.",
			"Group dinners where everyone splits the bill evenly are my nemesis.",
			"I went to a board game night {when}, it got competitive.",
			"I said yes to {num} plans this week and now I need a lie-down.",
			"{friend} has a new partner and we all met them at {place} {when}, very nice, very tall."},
		asks: []string{"Seen much of {friend} lately?", "Are you going to the party on {day}?", "Do you want to get dinner next week?"},
		answers: []string{"Not really, we keep missing each other.", "Probably, if I can find an outfit.",
			"Yes please, somewhere with a good dessert menu.", "Let me check the calendar and come back to you."},
	},
}

// chatTopicNames lists chatTopics in a fixed order (map order is random).
var chatTopicNames = []string{"weather", "tv", "sleep", "tech", "news", "weekend", "coffee", "shopping", "money", "commute",
	"music", "pets", "work", "family", "books", "food", "errands", "travel", "community", "health", "sport", "hobbies", "home", "social"}

// peopleSlots fill the braces of small talk.
var peopleSlots = map[string][]string{
	"weather": {"grey", "wet", "freezing", "muggy", "windy", "foggy", "weirdly warm", "drizzly", "bright but bitter"},
	"when":    {"last night", "this morning", "on Saturday", "yesterday afternoon", "over the weekend", "on my lunch break", "the other day", "on Tuesday evening"},
	"day":     {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"},
	"month":   {"January", "March", "April", "May", "June", "September", "October", "November"},
	"num":     {"two", "three", "four", "five", "six", "seven", "nine", "twelve"},
	"place": {"the market", "the park by the river", "the old pier", "the botanical gardens", "the high street", "the leisure centre",
		"the castle grounds", "the canal path", "the museum", "the shopping centre", "the harbour", "the train station", "the allotments"},
	"street": {"Mill Lane", "the high street", "Station Road", "Church Street", "Victoria Avenue", "Queen's Parade", "Harbour Row"},
	"shop":   {"the corner shop", "the big supermarket", "the bakery", "the garden centre", "the hardware shop", "the petrol station"},
	"show": {"that Danish crime drama", "the baking competition", "a documentary about octopuses", "the dating show everyone hates",
		"a fantasy series with dragons", "the quiz show", "a period drama with great hats", "the one about the hospital", "a reality show about estate agents"},
	"friend": {"Jess", "Omar", "my neighbour Pat", "Bea from work", "my cousin Luis", "Sunil", "Hattie", "my old flatmate Ren", "Gabe", "Nell"},
	"family": {"mum", "dad", "brother", "aunt", "grandad", "partner", "uncle", "gran"},
	"food": {"tacos", "dumplings", "a curry", "lasagne", "fish and chips", "pancakes", "a falafel wrap", "pho", "a cheese toastie",
		"paella", "pierogi", "a burrito", "shakshuka", "noodle soup", "a lemon cake", "banana bread"},
	"drink":     {"coffee", "tea", "hot chocolate", "chai", "a flat white", "peppermint tea", "an iced latte"},
	"thing":     {"umbrella", "garden chair", "bookshelf", "washing line", "desk", "kitchen table", "bike", "sofa"},
	"animal":    {"goat", "tortoise", "peacock", "ferret", "parrot", "alpaca", "rabbit", "swan"},
	"colour":    {"green", "mustard", "navy", "red", "orange", "lilac", "grey"},
	"app":       {"budgeting app", "language app", "step-counting app", "meditation app", "recipe app"},
	"city":      {"Lisbon", "Berlin", "Marrakesh", "Oslo", "Naples", "Dublin", "Prague", "Athens", "Tallinn", "Budapest"},
	"hobby":     {"crochet", "bouldering", "birdwatching", "chess", "ceramics", "calligraphy", "salsa dancing", "baking bread", "origami"},
	"room":      {"kitchen", "hallway", "bathroom", "living room", "bedroom", "spare room"},
	"kid":       {"niece", "nephew", "godson", "neighbour's daughter", "little cousin"},
	"boss":      {"My manager", "Our director", "The new team lead", "My supervisor", "The head of sales"},
	"appliance": {"coffee machine", "printer", "lift", "air conditioning", "dishwasher", "kettle", "fridge"},
	"feel":      {"a lot", "long", "strange", "slow", "manic", "fine, really", "exhausting"},
}

// Conversational glue: how turns start, how friends react, how sessions
// open and close ({o} is the other friend's name).
var (
	peopleInterjections = []string{"", "", "", "", "Oh! ", "Honestly? ", "So. ", "Ha. ", "You know what? ", "Okay. ", "Right. ",
		"Guess what. ", "Well. ", "Listen. ", "News! ", "Oh, before I forget. ", "Random thought. ", "Hey. ", "Update. ", "Okay, so. "}
	peopleReactions = []string{"Ha, I love that.", "Oh no!", "That's brilliant, {o}.", "Classic.", "Aw, that's sweet.", "No way!",
		"That sounds exhausting.", "Honestly, same.", "I can picture it perfectly.", "Oh, {o}, that's so you.", "Tell me about it.",
		"Wow.", "That made me laugh.", "Poor you.", "Good for you!", "I'm so glad.", "Ugh, the worst.", "That's lovely to hear.",
		"Ha! Of course.", "Oh, interesting.", "You're a legend.", "Fair enough.", "I'd have done the same."}
	peopleGreetings = []string{"Hey {o}! It's been a while, how are you?", "Hi {o}! Got a minute to catch up?", "{o}! How was your week?",
		"Morning, {o}. Surviving?", "Hey you. I've been meaning to message you all week.", "Hi {o}, how's everything going?",
		"Evening, {o}! Are you free to chat?", "Hey {o}, long time no talk!", "Hello hello, {o}. What's new?"}
	peopleGreetingReplies = []string{"Hey! Good to hear from you. I'm alright, busy but alright.", "Hi! Always. Things are good, a bit hectic.",
		"Just about! It's been a week. How about you?", "Hey! I was just thinking about you.", "Hi {o}! All good here, you?",
		"Oh, perfect timing, I needed a break.", "Hello! I'm well, a little tired. What's up with you?"}
	peopleClosings = []string{"Anyway, I should go, {o}. Talk soon!", "Right, dinner's calling. Speak soon!", "I've got to run, but this was lovely.",
		"Okay, bedtime for me. Night, {o}!", "Let's catch up again soon, yeah?", "Thanks for the chat, {o}, I needed that.",
		"I'll let you go. Take care!", "Must dash, the washing machine is beeping at me."}
	peopleClosingReplies = []string{"Bye! Take care of yourself.", "Talk soon, {o}!", "Same here. Night!", "Definitely. Bye for now!",
		"Any time. Speak soon.", "Ha, go! Bye!"}
	// relative times an event is told with
	peopleWhen = []string{"last Saturday", "yesterday", "last weekend", "on Friday", "two days ago", "last week", "on Sunday",
		"the day before yesterday", "last Tuesday", "a few days ago", "this morning", "last Thursday"}
)

// Everyday happenings, plans and opinions, put together from parts: the
// filler's long tail of words, so sessions do not share their sentences.
var (
	lifeDone = []string{"repainted the front door", "baked a lopsided carrot cake", "finally returned my library books", "fixed the chain on my bike",
		"cleared out the shed", "went to a car boot sale", "learned to fold a fitted sheet", "tried the new Lebanese place", "assembled a wardrobe with no instructions",
		"found a tenner in an old coat", "got lost in the woods behind the golf course", "watched the sunrise from the hill", "signed up for a first-aid course",
		"helped my neighbour move a piano", "made marmalade", "sorted through a box of old letters", "fell asleep on the sofa at eight", "beat my dad at chess",
		"went swimming in the lido", "walked the whole coastal path to the next village", "had my hair cut far too short", "rescued a hedgehog from a drain",
		"built a birdhouse out of an old drawer", "got a parking ticket outside the vet's", "went to a jumble sale at the church hall", "made a photo album for my gran",
		"fixed the dripping tap myself", "went to a silent disco", "tried paddleboarding and fell in twice", "reorganised the spice rack alphabetically",
		"went to a lecture about Roman roads", "planted bulbs along the fence", "went to the cinema on a weekday afternoon", "waited three hours for a sofa delivery",
		"drove my nephew to his football tournament", "had a picnic in the rain", "visited the transport museum", "ate my body weight in pastries at the market",
		"locked myself out and climbed in through the kitchen window", "tried to make sushi", "finished a thousand-piece puzzle of a lighthouse",
		"went blackberry picking along the old railway", "bought a second-hand typewriter", "sat in a traffic jam behind a herd of sheep", "went to a comedy night"}
	lifeWith    = []string{"", "", "", "", " with Jess", " with my cousin", " with the neighbours", " with my dad", " with a friend from work", " with my partner"}
	lifeComment = []string{"and it was the highlight of my week", "which was a mistake", "and I'd do it again", "and I'm still recovering",
		"and nobody believes me", "and it went surprisingly well", "and I regret nothing", "and I laughed the whole time", "and it took far longer than planned",
		"and I have the photos to prove it", "and now I ache all over", "and it cost next to nothing", "which I'd been putting off for months"}
	lifePlans = []string{"learn to make proper bread", "take the train up the coast", "start swimming in the mornings", "redo the bathroom tiles",
		"go to that new climbing gym", "clear out the loft", "visit my godmother in the countryside", "get my bike serviced", "sign up for a night class in Spanish",
		"throw a dinner party", "grow chillies on the windowsill", "finally frame those prints", "volunteer at the park clean-up", "try a silent retreat",
		"go camping in the hills", "learn a few card tricks", "buy a proper winter coat", "sort out my pension", "watch every film by one director", "get up early and see the market open"}
	lifeLater    = []string{"this summer", "before the end of the year", "next month", "once work calms down", "in the spring", "some weekend soon", "after the holidays"}
	lifeOpinions = []string{"that brunch is just lunch with better marketing", "that socks with sandals are fine, actually", "that the second film was better than the first",
		"that pineapple on pizza is a crime", "that nobody really likes networking", "that the best seat on a bus is upstairs at the front", "that cold toast is underrated",
		"that autumn is the best season by far", "that board games ruin friendships", "that every kitchen needs one really good knife",
		"that people who reply-all should be stopped", "that a long walk fixes most things", "that the old town square was nicer before the fountain",
		"that the library is the last free warm place in town", "that sequels should be banned", "that nobody needs more than three mugs",
		"that the best holidays are the ones with no plan", "that roundabouts are a test of character", "that the ice cream van plays its tune too early",
		"that the first sip of tea in the morning is sacred", "that every town needs a proper bakery", "that voicemail should be retired",
		"that I'm a better cook when nobody is watching", "that mornings would be fine if they started at ten", "that birthday cards are a scam"}
	lifeStance = []string{"I've decided", "My hot take:", "Controversial, but I think", "Jess and I agreed", "I'm more and more convinced",
		"Don't argue with me, but I reckon", "After much thought, I've concluded"}
)

// life is one sentence about something done, planned or thought.
func life(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0, 1:
		return fmt.Sprintf("I %s%s %s, %s.", pick(rng, lifeDone), pick(rng, lifeWith), pick(rng, peopleSlots["when"]), pick(rng, lifeComment))
	case 2:
		return fmt.Sprintf("I really want to %s %s.", pick(rng, lifePlans), pick(rng, lifeLater))
	default:
		return fmt.Sprintf("%s %s.", pick(rng, lifeStance), pick(rng, lifeOpinions))
	}
}
