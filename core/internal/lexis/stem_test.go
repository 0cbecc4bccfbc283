package lexis

import "testing"

func TestStem(t *testing.T) {
	// Examples from Porter's paper, run through the whole algorithm.
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "digitizer": "digit", "operator": "oper", "hopefulness": "hope",
		"goodness": "good", "generalizations": "gener", "oscillators": "oscil", "adjustment": "adjust",
		"replacement": "replac", "adoption": "adopt", "effective": "effect", "cease": "ceas",
		"controlling": "control", "running": "run", "roll": "roll", "allowance": "allow",
		"inference": "infer", "airliner": "airlin", "communism": "commun", "homologous": "homolog",
		"probate": "probat", "rate": "rate", "electrical": "electr", "triplicate": "triplic",
		"formative": "form", "cycling": "cycl", "cycles": "cycl", "intolerance": "intoler",
		"intolerant": "intoler", "painter": "painter", "paints": "paint", "renewed": "renew",
		"renewing": "renew", "a": "a", "is": "is", "dinos": "dino", "café": "café", "x1": "x1",
	} {
		if got := string(Stem([]byte(in))); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}
