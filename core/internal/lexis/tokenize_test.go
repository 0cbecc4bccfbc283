package lexis

import (
	"reflect"
	"testing"
)

func TestTokens(t *testing.T) {
	sc := NewScanner()
	for in, want := range map[string][]Token{
		"Cycles to the office!":           {{"cycl", 0, 6}, {"to", 7, 9}, {"the", 10, 13}, {"offic", 14, 20}},
		"Bolacha's rabies":                {{"bolacha", 0, 9}, {"rabi", 10, 16}},
		"don’t 'quote'":                   {{"dont", 0, 5}, {"quot", 7, 12}},
		"Façades, Médis, STRASSE, Straße": {{"facad", 0, 7}, {"medi", 9, 14}, {"strass", 16, 23}, {"strass", 25, 31}},
		"e\u0301te\u0301":                 {{"et", 0, 5}},
		"日本語 針":                           {{"日", 0, 1}, {"本", 1, 2}, {"語", 2, 3}, {"針", 4, 5}},
		"10:30 X1-Carbon":                 {{"10", 0, 2}, {"30", 3, 5}, {"x1", 6, 8}, {"carbon", 9, 15}},
		"food.md":                         {{"food", 0, 4}, {"md", 5, 7}},
		"Ünïcödé ΑΘΗΝΑ Москва":            {{"unicod", 0, 7}, {"αθηνα", 8, 13}, {"москва", 14, 20}},
		"  ... ''":                        nil,
	} {
		if got := sc.Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %v, want %v", in, got, want)
		}
	}
	if got := sc.Terms("The cats, the CAT"); !reflect.DeepEqual(got, []string{"the", "cat"}) {
		t.Errorf("Terms = %v", got)
	}
}
