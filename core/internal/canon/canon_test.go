package canon

import "testing"

func TestEncodeMatchesPython(t *testing.T) {
	v := map[string]any{"b": "\x7f/<>&é\U0001F600\b\f\x01", "a": nil}
	want := `{"a":null,"b":"\u007f/<>&\u00e9\ud83d\ude00\b\f\u0001"}`
	if got := Encode(v); got != want {
		t.Fatalf("Encode = %s, want %s", got, want)
	}
	if got := Encode(map[string]any{"z": []any{1, true, "x"}, "k": map[string]string{"b": "1", "a": "2"}}); got != `{"k":{"a":"2","b":"1"},"z":[1,true,"x"]}` {
		t.Fatalf("nested: %s", got)
	}
}
