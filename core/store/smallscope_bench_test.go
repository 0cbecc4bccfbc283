package store_test

import (
	"testing"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// smallNotes is a user's notebook of a few short notes, the scope most
// searches of an agent's memory run over.
var smallNotes = map[string]string{
	"u/main/food.md":      "- Pescatarian; oat milk in coffee.\n- Allergic to peanuts.\n- Favourite restaurant: the Lebanese place on Rua Augusta.\n",
	"u/main/commute.md":   "- Cycles to the office on Tuesdays and Thursdays.\n- Takes the train when it rains.\n",
	"u/main/fitness.md":   "- Bouldering at the gym three evenings a week.\n- Ran a half marathon in 2024.\n",
	"u/main/family.md":    "- Sister Joana lives in Porto with two kids.\n- Parents visit every summer.\n",
	"u/main/work.md":      "- Backend engineer at a logistics startup.\n- Prefers Go and Postgres; on call every sixth week.\n",
	"u/main/travel.md":    "- Flew to Tokyo in March; loved the ramen in Shinjuku.\n- Planning a trip to Iceland.\n",
	"u/main/pets.md":      "- A cat called Bolacha, who had rabies shots in May.\n",
	"u/main/music.md":     "- Plays bass in a jazz trio on Fridays.\n- Listens to podcasts while cooking.\n",
	"u/main/health.md":    "- Knee injury from running; physiotherapy twice a month.\n",
	"u/main/reading.md":   "- Reading a novel by Saramago; book club meets monthly.\n",
	"u/main/home.md":      "- Rents a flat with a balcony; wants to buy a house next year.\n",
	"u/main/schedule.md":  "- Stand-up at 9:30; no meetings on Wednesday afternoons.\n",
	"u/main/learning.md":  "- Studying Japanese for the trip; 20 minutes a day.\n",
	"u/main/finance.md":   "- Saving for a deposit; budget spreadsheet updated monthly.\n",
	"u/main/friends.md":   "- Dinner with Rui and Marta most Saturdays.\n",
	"u/main/car.md":       "- Sold the car last year; uses car sharing for trips.\n",
	"u/main/garden.md":    "- Grows tomatoes and basil on the balcony.\n",
	"u/main/sleep.md":     "- Goes to bed at 23:00; wakes at 7.\n",
	"u/main/projects.md":  "- Side project: a CLI for tracking climbing sessions.\n",
	"u/main/birthdays.md": "- Mother's birthday on 12 April; Joana's on 3 October.\n",
}

// BenchmarkSearchSmallScope is one BM25 search over a notebook of 20
// short notes, the scope of most of an agent's searches, by questions
// as an agent asks them.
func BenchmarkSearchSmallScope(b *testing.B) {
	ctx := b.Context()
	s := store.New(newMemDriver(b), nil)
	defer s.Close()
	for p, c := range smallNotes {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: c}); err != nil {
			b.Fatal(err)
		}
	}
	queries := []string{
		"What are her workout habits?",
		"where does the user's sister live",
		"does she have any food allergies",
		"which musical instrument do they play",
		"how does the user get to work",
	}
	for i := range b.N {
		req := search.Request{Prefix: "u/main/", Mode: search.BM25, Query: queries[i%len(queries)],
			Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 4000}
		if _, err := s.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
