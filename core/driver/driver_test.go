package driver

import "testing"

func TestPrefixEnd(t *testing.T) {
	for in, want := range map[string]string{
		"a/": "a0", "tenant": "tenanu", "é": "ê", "a\U0010FFFF": "b", "\U0010FFFF": "", "": "", "a\uD7FF": "a\uE000",
	} {
		got, ok := PrefixEnd(in)
		if got != want || ok != (want != "") {
			t.Errorf("PrefixEnd(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestCutRunes(t *testing.T) {
	if got, cut := CutRunes("héllo", 2); got != "hé" || !cut {
		t.Fatalf("CutRunes = %q, %v", got, cut)
	}
}
