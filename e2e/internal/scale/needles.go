package scale

// Needle is one unusual fact a user told once, and how they ask for it
// later.
type Needle struct {
	// Fact is the user's turn that holds it.
	Fact string
	// Query is the later question, in other words but for Cue, as a
	// model would pass it to search_memory.
	Query string
	// Words are the fact's distinctive words, what the question asks
	// for: in Fact, never in the filler, never in Query.
	Words []string
	// Cue are the only words (stop words aside) Query shares with Fact,
	// at least one of them never in the filler: what lets BM25 find the
	// fact among any number of files, so the benchmark measures the
	// search's reach and cost, not its paraphrase matching.
	Cue []string
}

// needles are written by hand: each fact is told in a turn of its own
// file, and its question asks for it in other words.
var needles = []Needle{
	{Fact: "My dentist, Dr. Okafor, fixed my cracked molar on Tuesday and banned me from chewing ice.",
		Query: "which doctor treated my sore molar", Words: []string{"okafor", "cracked"}, Cue: []string{"molar"}},
	{Fact: "Our iguana Bartholomew turned fourteen, and he refuses everything except dandelion leaves.",
		Query: "what does our iguana eat", Words: []string{"bartholomew", "dandelion"}, Cue: []string{"iguana"}},
	{Fact: "The spare garage key is hidden inside the porcelain frog beside the back gate.",
		Query: "where is the extra key for the garage", Words: []string{"porcelain", "frog"}, Cue: []string{"garage", "key"}},
	{Fact: "My blood type is AB negative; the transfusion nurse wrote it on a card in my wallet.",
		Query: "which blood group am I", Words: []string{"transfusion"}, Cue: []string{"blood"}},
	{Fact: "Grandma's secret stew takes a spoonful of cocoa and three juniper berries.",
		Query: "what goes into grandma's stew", Words: []string{"cocoa", "juniper", "berries"}, Cue: []string{"grandma", "stew"}},
	{Fact: "The pharmacist warned me that the antibiotic amoxicillin gives me hives.",
		Query: "which antibiotic am I allergic to", Words: []string{"amoxicillin", "hives", "pharmacist"}, Cue: []string{"antibiotic"}},
	{Fact: "The wifi password at the cabin is marmot-lantern-42, it's on the fridge magnet.",
		Query: "how do I get online at the cabin", Words: []string{"marmot", "lantern"}, Cue: []string{"cabin"}},
	{Fact: "Zeynep lent me her climbing harness and belay device; I promised to give them back by March.",
		Query: "whose harness do I have", Words: []string{"zeynep", "belay"}, Cue: []string{"harness"}},
	{Fact: "My passport expires in August 2029; the number ends in 7731.",
		Query: "when does my passport expire", Words: []string{"2029", "7731"}, Cue: []string{"passport", "expire"}},
	{Fact: "Our plumber, Mr. Vasquez, fixed the leaking pipes and charges eighty pounds an hour.",
		Query: "who fixed our pipes", Words: []string{"vasquez", "eighty"}, Cue: []string{"pipes", "fixed"}},
	{Fact: "Our daughter's violin teacher is Ms. Abernathy, lessons every Thursday at half four.",
		Query: "who teaches our daughter the violin", Words: []string{"abernathy"}, Cue: []string{"daughter", "violin"}},
	{Fact: "I keep the emergency cash in a hollowed-out dictionary on the top shelf of the study.",
		Query: "where is the emergency cash stashed", Words: []string{"hollowed", "dictionary"}, Cue: []string{"emergency", "cash"}},
	{Fact: "The boat we rent every August is a wooden sloop called the Persephone.",
		Query: "what is the name of the boat we hire in summer", Words: []string{"sloop", "persephone"}, Cue: []string{"boat"}},
	{Fact: "The padlock on the kayak rack is set to nineteen, four, thirty-three.",
		Query: "which numbers open the kayak rack", Words: []string{"padlock", "nineteen", "thirty"}, Cue: []string{"kayak", "rack"}},
	{Fact: "Uncle Ferdinand is lactose intolerant but insists on eating gorgonzola at Christmas.",
		Query: "which relative is lactose intolerant", Words: []string{"ferdinand", "gorgonzola"}, Cue: []string{"lactose", "intolerant"}},
	{Fact: "My counsellor, Dagny Halvorsen, suggested journaling before bed for the racing thoughts.",
		Query: "what is my counsellor's name", Words: []string{"dagny", "halvorsen", "journaling"}, Cue: []string{"counsellor"}},
	{Fact: "The neighbours' cockatoo shrieks 'mind the gap' every time the postman comes.",
		Query: "what phrase does the cockatoo repeat", Words: []string{"shrieks"}, Cue: []string{"cockatoo"}},
	{Fact: "I was born in Tromsø, above the Arctic Circle, in the middle of the polar night.",
		Query: "where was I born", Words: []string{"tromsø", "arctic", "polar"}, Cue: []string{"born"}},
	{Fact: "Our wedding cake was lavender and pistachio, baked by a friend in Ghent.",
		Query: "what flavour was our wedding cake", Words: []string{"lavender", "pistachio", "ghent"}, Cue: []string{"wedding", "cake"}},
	{Fact: "My first vehicle was a rusty 1987 Volvo estate that I named Gunhild.",
		Query: "what was my first vehicle", Words: []string{"volvo", "gunhild", "rusty"}, Cue: []string{"first", "vehicle"}},
}

// Needles returns the 20 needles, in order.
func Needles() []Needle {
	out := make([]Needle, len(needles))
	copy(out, needles)
	return out
}
