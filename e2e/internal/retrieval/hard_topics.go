package retrieval

// topic is what a session of the hard conversation set is mostly about:
// questions a user asks and the points an assistant's long answers are
// made of.
type topic struct {
	asks   []string
	points []string
}

// topics are the hard set's session topics, by name; facts name theirs,
// so a fact's distractor sessions talk about the same things.
var topics = map[string]topic{
	"home": {
		asks: []string{
			"Our flat gets really damp in winter and there's a bit of mould on the bedroom ceiling. What can I do that doesn't cost a fortune?",
			"I want to make the living room feel bigger without buying new furniture. Any ideas?",
			"How often should I actually be cleaning the oven and the fridge? I feel like I never do it.",
			"The landlord says we can paint the walls. What should I know before I start?",
			"We keep losing keys and mail in the hallway. How do people organise an entryway?",
		},
		points: []string{
			"Ventilate daily: ten minutes with two windows open on opposite sides swaps the moist air faster than a window left ajar all day.",
			"Keep furniture a hand's width from outside walls so air can move behind it; cold corners behind wardrobes are where mould starts.",
			"A cheap hygrometer tells you whether you have a problem: indoor humidity between 40 and 60 percent is the comfortable range.",
			"Light colours on the walls and one large mirror opposite the window make a room read as bigger than any amount of rearranging.",
			"Clear the floor first: baskets under the sofa and hooks on the back of doors free more space than a new shelf.",
			"Wipe spills in the fridge as they happen and do a proper clear-out every month, just before the weekly shop, when it's emptiest.",
			"For painting, wash the walls with sugar soap, fill cracks, and always do a test patch; two thin coats beat one thick one.",
			"A small tray or bowl by the door for keys, a wall pocket for letters and one hook per person solves most hallway chaos.",
			"Extractor fans only help if they run long enough, so leave the bathroom fan on for twenty minutes after a shower.",
		},
	},
	"work": {
		asks: []string{
			"I have way too many meetings this week. How do I politely decline some of them?",
			"How do I ask my manager for feedback without it being awkward?",
			"I need to prepare a presentation for the leadership team by Thursday. Where do I start?",
			"A colleague keeps taking credit for my ideas in meetings. How should I handle it?",
			"What's a good way to keep track of all the small tasks people throw at me during the day?",
		},
		points: []string{
			"Ask for an agenda before accepting; if there is none, reply that you'll catch up from the notes and offer to send input in writing.",
			"Block two mornings a week for focused work in your calendar and treat them like meetings with yourself.",
			"Request feedback about something specific, such as last week's client call, rather than asking how am I doing in general.",
			"Start a presentation from the one decision you want the audience to make, then keep only the slides that support it.",
			"Rehearse out loud once, with a timer; most people run twenty percent longer than they think.",
			"Send a short recap email after meetings where you proposed something; it puts your name on the idea without any confrontation.",
			"Keep a single running list, paper or app, and review it at the same time every afternoon so nothing lives only in your head.",
			"If a request arrives in a corridor, ask the person to drop it in a message so it lands on your list with the details.",
			"At the end of the week, write three lines about what you finished; it makes review season much easier.",
		},
	},
	"cooking": {
		asks: []string{
			"What can I batch cook on Sunday that keeps well for a few days of lunches?",
			"My stir-fries always come out soggy. What am I doing wrong?",
			"How do I make a simple soup taste less flat?",
			"What are the pantry staples I should always have so I can make dinner without shopping?",
			"I'm hosting six people on Saturday. How do I time everything so it's all ready together?",
		},
		points: []string{
			"Grain bowls batch well: cook a big pot of rice or farro, roast two trays of vegetables and keep a jar of dressing on the side.",
			"A very hot pan and small batches are the secret to stir-fry; crowding the pan steams the vegetables instead of searing them.",
			"Season in layers and finish with acid: a squeeze of lemon or a spoon of vinegar at the end wakes up almost any soup.",
			"Keep tinned tomatoes, chickpeas, dried pasta, rice, onions, garlic, eggs and a good stock cube, and dinner is always possible.",
			"Write the menu backwards from serving time, so you know when each dish has to go into the oven or onto the hob.",
			"Pick one dish that can be made entirely the day before, such as a dessert or a stew, so the evening has only one moving part.",
			"Salt pasta water generously, roughly like the sea, and save a cup of it to loosen the sauce at the end.",
			"Toast spices in a dry pan for a minute before using them; it makes a bigger difference than buying expensive ones.",
			"Let meat rest after cooking for about a third of its cooking time so the juices stay in when you slice it.",
		},
	},
	"travel": {
		asks: []string{
			"How do I pack for ten days with only a carry-on bag?",
			"What's the best way to deal with jet lag on a long-haul flight?",
			"Is travel insurance really worth it for a short trip in Europe?",
			"How far ahead should I book train tickets to get a decent price?",
			"What should I do the first day in a new city so I get my bearings?",
		},
		points: []string{
			"Pack outfits around two colours so everything matches, roll clothes and wear your bulkiest shoes on the plane.",
			"A small laundry bar and a travel line mean you can wash clothes in the sink and pack for five days instead of ten.",
			"For jet lag, shift your sleep by an hour a day before you leave and get outside in the morning light when you land.",
			"Insurance earns its cost when it covers medical treatment and cancellation; check what your credit card already includes first.",
			"Train fares in most of Europe are cheapest eight to twelve weeks ahead, and midweek departures are usually less busy.",
			"On day one, take a walking tour or ride a tram line end to end; it gives you a mental map faster than any guidebook.",
			"Keep digital copies of your passport and bookings in an offline folder on your phone.",
			"Carry a refillable bottle and a light scarf; planes, trains and museums are all colder than you expect.",
			"Download offline maps of the area before you go so you are not hunting for wifi to find your hotel.",
		},
	},
	"health": {
		asks: []string{
			"I keep waking up at 3am and can't fall back asleep. What can I try?",
			"How much water should I really be drinking in a day?",
			"I get headaches most afternoons at work. Could it be my screen?",
			"What should I ask my doctor at my annual checkup?",
			"Is it bad that I sit for nine hours a day?",
		},
		points: []string{
			"Keep the same wake-up time every day, weekends included; a steady morning anchor does more for sleep than any bedtime rule.",
			"If you are awake for more than twenty minutes, get up, read something dull in dim light and go back when you feel sleepy.",
			"Thirst is a reasonable guide for most adults; pale yellow urine means you are drinking enough.",
			"Screen headaches often come from glare and posture: put the monitor an arm's length away with the top at eye level.",
			"Follow the 20-20-20 rule: every twenty minutes look at something twenty feet away for twenty seconds.",
			"Bring a list of medications, family history changes and any symptom you have noticed for more than a few weeks.",
			"Stand up and walk for a couple of minutes every half hour; short breaks matter more than one long workout.",
			"Caffeine has a long half-life, so a coffee at four in the afternoon is still partly in your system at bedtime.",
			"Anything that is getting worse, wakes you at night or comes with weight loss should be checked sooner rather than later.",
		},
	},
	"hobbies": {
		asks: []string{
			"I want a new hobby that gets me off screens in the evening. What would you suggest?",
			"How do I stay motivated practising something when progress is slow?",
			"Is it worth joining a club or should I just learn things on my own?",
			"What's a creative hobby I could do in a small flat?",
			"How do I find time for hobbies with a full-time job?",
		},
		points: []string{
			"Pick something with your hands: sketching, knitting or model building give a visible result after each evening.",
			"Track the time you practise rather than the results; the minutes add up long before the skill shows.",
			"Record yourself once a month and compare; progress that feels invisible day to day is obvious over a quarter.",
			"A club gives you deadlines, feedback and people to learn from, which most of us need more than lessons.",
			"Small spaces suit watercolour, calligraphy, crochet and miniature painting, all of which pack into one box.",
			"Attach the hobby to an existing habit, like twenty minutes right after dinner, so it doesn't need a decision each day.",
			"Set a tiny goal, such as finishing one piece a month, so there's an end in sight.",
			"Buy cheap materials at first; expensive supplies make people afraid to waste them and slow the learning.",
			"Say the hobby out loud to friends; telling people makes you more likely to keep going.",
		},
	},
	"learning": {
		asks: []string{
			"What's the most effective way to study for an exam when I only have evenings?",
			"I forget things I read almost immediately. How do I remember more?",
			"Are online courses worth paying for or are the free ones just as good?",
			"How do I learn a new skill quickly for work?",
			"I want to get back into studying after ten years. Any advice?",
		},
		points: []string{
			"Test yourself instead of rereading: closing the book and writing down what you remember is the most reliable study method.",
			"Spread study over many short sessions; spaced repetition beats cramming for anything you need to keep.",
			"After each chapter, explain it in three sentences as if to a friend; gaps in the explanation show what to review.",
			"Paid courses help mainly through structure and deadlines; if you are disciplined, free material is often just as good.",
			"Learn the twenty percent of a skill you'll use every day first, then fill in the rest as real tasks demand it.",
			"Find someone one step ahead of you and ask them to look at your work once a week.",
			"Start back with something small and practical so the first weeks end in a success rather than a struggle.",
			"Keep a learning log with the date and one thing you learned; it's motivating to scroll back through.",
			"Sleep is part of studying: memories consolidate overnight, so an all-nighter undoes much of the work.",
		},
	},
	"family": {
		asks: []string{
			"My parents are getting older and I worry about them living alone. How do I bring it up?",
			"How do we divide household chores fairly between us?",
			"What are some low-cost things to do with kids on a rainy weekend?",
			"My brother and I argue every time we talk about politics. How do I keep family dinners calm?",
			"How do I stay close to friends who live in another country?",
		},
		points: []string{
			"Start with a specific observation and a question, like asking how the stairs feel lately, rather than a plan you have already made.",
			"List every chore, including invisible ones like booking appointments, then split by preference and rotate the ones nobody wants.",
			"Build a blanket fort, bake something simple, or run a treasure hunt with clues hidden around the house.",
			"Agree beforehand on a topic that is off the table, and have a neutral one ready to steer back to.",
			"A fixed monthly video call in the calendar keeps long-distance friendships alive better than waiting for the right moment.",
			"Send small things often: a photo, a voice note, a link that reminded you of them.",
			"Libraries often have free story times, board games and craft sessions at weekends.",
			"Ask older parents what they want to keep doing on their own, and build any help around that.",
			"Regular check-ins about the chore split, every couple of months, stop resentment before it builds.",
		},
	},
	"fitness": {
		asks: []string{
			"I want to start running but I get out of breath after two minutes. How do I build up?",
			"How many days a week should I do strength training as a beginner?",
			"My knees hurt after squats. Am I doing them wrong?",
			"What should I eat before a morning workout?",
			"I always give up on exercise after three weeks. How do I make it stick?",
		},
		points: []string{
			"Alternate one minute of jogging with two of walking, and add a little jogging each week; a couch-to-5K plan does exactly this.",
			"Two or three full-body strength sessions a week are plenty to start, with a rest day between them.",
			"Keep your knees tracking over your toes and push your hips back as if sitting on a chair; film yourself from the side.",
			"A banana or a slice of toast half an hour before is enough for most morning sessions.",
			"Schedule workouts like appointments and lay your kit out the night before so there is nothing to decide in the morning.",
			"Increase distance or weight by about ten percent a week at most; most injuries come from doing too much too soon.",
			"Warm up for five minutes with brisk walking, leg swings and arm circles before anything intense.",
			"Find a friend or a class; people who exercise with someone else miss far fewer sessions.",
			"Sleep and protein matter as much as the workout itself for getting stronger.",
		},
	},
	"books": {
		asks: []string{
			"I used to read a lot but now I can't focus on a book. How do I get back into it?",
			"How do book clubs usually choose what to read?",
			"Is it okay to stop reading a book halfway if I'm not enjoying it?",
			"What's a good way to keep track of the books I want to read?",
			"Do you think audiobooks count as reading?",
		},
		points: []string{
			"Start with short books or story collections; finishing something quickly rebuilds the habit.",
			"Read at the same time each day, even ten pages before bed, and leave the phone in another room.",
			"Many clubs rotate who picks, or shortlist three titles and vote; keeping books under 350 pages helps everyone finish.",
			"Life is short and the list is long; giving up on a book you dislike frees time for one you'll love.",
			"A simple note on your phone, or a library app's wish list, is enough to track what you want to read.",
			"Comprehension from listening is about the same as from reading for most stories, so audiobooks absolutely count.",
			"Mix genres: alternating a heavy book with a light one keeps momentum.",
			"Your local library can order almost anything, and ebook loans are usually free with a card.",
			"Writing one line about each book when you finish it makes them much easier to remember years later.",
		},
	},
	"money": {
		asks: []string{
			"How much should I keep in an emergency fund?",
			"Is it better to pay off my credit card or put money into savings first?",
			"We want to spend less on groceries. Where do we start?",
			"How do I stop impulse buying online?",
			"Should I be investing if I only have a little money each month?",
		},
		points: []string{
			"Aim for three to six months of essential expenses in an easy-access account, built up gradually.",
			"Pay off high-interest debt first; almost no savings account earns what a credit card charges.",
			"Plan meals for the week, shop with a list and check what's already in the cupboards before going.",
			"Leave things in the online basket for forty-eight hours; most of the urge passes by then.",
			"Unsubscribe from shop newsletters and remove saved card details so buying takes a little effort.",
			"Small regular amounts into a low-cost index fund add up, and automating the transfer removes the temptation to skip it.",
			"Review subscriptions every quarter; most people find at least one they have forgotten about.",
			"Own-brand versions of staples are often made in the same factories as the big names.",
			"Give every pound or dollar a job at the start of the month so spending decisions are made once, not every day.",
		},
	},
	"gardening": {
		asks: []string{
			"What vegetables are easiest to grow on a small balcony?",
			"My houseplants keep getting yellow leaves. What am I doing wrong?",
			"When is the right time to plant bulbs?",
			"How do I start composting in a small garden?",
			"How often should I water plants in pots during summer?",
		},
		points: []string{
			"Salad leaves, radishes, herbs and cherry tomatoes all do well in containers with at least six hours of sun.",
			"Yellow leaves usually mean overwatering; let the top few centimetres of soil dry out before watering again.",
			"Spring bulbs go in during autumn, roughly six weeks before the ground freezes, at about three times their own depth.",
			"Mix green waste like peelings with brown waste like cardboard in roughly equal parts and turn the heap every few weeks.",
			"Pots dry out fast in summer; check them daily and water deeply in the morning until it runs from the drainage holes.",
			"Make sure every pot has drainage holes; standing water rots roots faster than anything else.",
			"Feed container plants every couple of weeks in the growing season, because potting soil runs out of nutrients.",
			"Group plants with similar needs together so one watering routine suits them all.",
			"Rotate indoor plants a quarter turn each week so they grow evenly toward the light.",
		},
	},
	"tech": {
		asks: []string{
			"My laptop has become really slow. What can I check before buying a new one?",
			"How do I back up my photos so I never lose them?",
			"Is a password manager actually safe to use?",
			"What's the easiest way to learn a bit of coding for work?",
			"How do I stop my phone from distracting me all the time?",
		},
		points: []string{
			"Check what starts automatically at login and what's using memory; a few background apps are often the whole problem.",
			"Free up disk space: a nearly full drive slows everything, and an old spinning disk swapped for an SSD feels like a new machine.",
			"Follow the 3-2-1 rule for backups: three copies, on two kinds of storage, one of them somewhere else.",
			"A reputable password manager with a strong master password and two-factor login is far safer than reusing passwords.",
			"Pick a small real task, like renaming files or cleaning a spreadsheet, and learn just enough code to automate it.",
			"Turn off all notifications except from people, and move social apps off the home screen.",
			"Keep your operating system and browser updated; most attacks use holes that have already been fixed.",
			"Grayscale mode makes a phone surprisingly boring, which is the point.",
			"Restart devices once a week; it clears out memory leaks and applies pending updates.",
		},
	},
	"writing": {
		asks: []string{
			"Can you help me write a polite email turning down an invitation?",
			"How do I make my reports shorter without losing important information?",
			"I have to write a speech for a friend's leaving party. How do I structure it?",
			"My emails get ignored. How do I get people to actually reply?",
			"How do I write a thank-you note that doesn't sound generic?",
		},
		points: []string{
			"Thank them warmly, say clearly that you can't make it, and suggest another time if you'd like to see them.",
			"Put the conclusion in the first paragraph and move the details to an appendix that people can skip.",
			"A good speech has one story, one joke and one wish for the future; two or three minutes is plenty.",
			"Ask one clear question in the subject line and make the answer easy, such as a yes or no.",
			"Mention the specific thing they did and what it meant to you; specifics are what make a note feel personal.",
			"Cut every sentence that starts with I just wanted to, and most adverbs.",
			"Read your draft aloud; anything you stumble over needs rewriting.",
			"Use short paragraphs and bullet points for anything with steps or options.",
			"Sleep on important messages; a quick reread in the morning catches the tone problems.",
		},
	},
}

// topicNames lists the topics in a fixed order (maps iterate randomly).
var topicNames = []string{"home", "work", "cooking", "travel", "health", "hobbies", "learning", "family", "fitness", "books", "money", "gardening", "tech", "writing"}

// openers and closers frame an assistant's long answer.
var openers = []string{
	"Good question, and a very common one. Here are a few things that usually help:",
	"Happy to help with that. A few ideas, roughly in order of how much difference they make:",
	"That's worth getting right. Here's what I'd suggest:",
	"There's no single answer, but these tend to work for most people:",
	"Sure. Let's break it down into a few practical steps:",
	"I understand, that can be frustrating. Some things to try:",
}

var closers = []string{
	"If you tell me a bit more about your situation, I can tailor this further.",
	"Try one or two of these first rather than everything at once, and see what sticks.",
	"Let me know how it goes, and we can adjust the plan.",
	"Would you like me to turn this into a short checklist?",
	"None of this has to be perfect; small consistent changes add up.",
}
