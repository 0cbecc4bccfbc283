package memory

import (
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

func TestEscapeNamespace(t *testing.T) {
	for in, want := range map[string]string{
		"kamal":                                "kamal",
		"kamal@example.com":                    "kamal_40example.com",
		"user_1":                               "user_5f1",
		"a/b":                                  "a_2fb",
		"a..b":                                 "a._2eb",
		"é":                                    "_c3_a9",
		"":                                     "",
		"550e8400-e29b-41d4-a716-446655440000": "550e8400-e29b-41d4-a716-446655440000",
	} {
		if got := EscapeNamespace(in); got != want {
			t.Errorf("EscapeNamespace(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("@", 100)
	if got := EscapeNamespace(long); !strings.HasPrefix(got, "_h") || len(got) != 66 {
		t.Errorf("long id → %q", got)
	}
	// Every escaped id is one valid segment, and distinct ids stay distinct.
	seen := map[string]string{}
	for _, in := range []string{"a_40b", "a@b", "a/b", "a_2fb", ".", "..", "...", "x.", ".x", "_", "__", "_5f", long, long + "x", "-", "A", "a"} {
		got := EscapeNamespace(in)
		if err := store.ValidatePath(got); err != nil || strings.Contains(got, "/") {
			t.Errorf("EscapeNamespace(%q) = %q is not one valid segment: %v", in, got, err)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q both escape to %q", prev, in, got)
		}
		seen[got] = in
	}
}

func FuzzEscapeNamespace(f *testing.F) {
	for _, s := range []string{"kamal@example.com", "..", "a/b", "_5f", strings.Repeat("x", 250)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		got := EscapeNamespace(id)
		if id == "" {
			if got != "" {
				t.Fatalf("empty id → %q", got)
			}
			return
		}
		if err := store.ValidatePath(got); err != nil || strings.Contains(got, "/") {
			t.Fatalf("EscapeNamespace(%q) = %q: %v", id, got, err)
		}
	})
}
