package embedapi

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("VOYAGE_API_KEY", "pa")
	t.Setenv("GEMINI_API_KEY", "g")
	for spec, want := range map[string]string{
		"openai:text-embedding-3-small":      "openai:text-embedding-3-small@1536",
		"openai:text-embedding-3-large@1024": "openai:text-embedding-3-large@1024",
		" voyage:voyage-3.5 ":                "voyage:voyage-3.5@1024",
		"gemini:gemini-embedding-001@768":    "gemini:gemini-embedding-001@768",
		"ollama:nomic-embed-text":            "ollama:nomic-embed-text",
		"ollama:nomic-embed-text:v1.5":       "ollama:nomic-embed-text:v1.5",
		"OpenAI:m":                           "openai:m@",
	} {
		e, err := Parse(t.Context(), spec)
		if want == "openai:m@" { // provider names are case-insensitive
			want = "openai:m"
		}
		if err != nil || e.Model() != want {
			t.Errorf("Parse(%q) = %v, %v; want Model() %q", spec, e, err, want)
		}
	}
	for _, spec := range []string{"", "openai", "openai:", "cohere:embed-v4.0", "openai:m@0", "openai:m@x", "openai:@5", "wordvec"} {
		if _, err := Parse(t.Context(), spec); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("Parse(%q): %v, want ErrInvalidSpec", spec, err)
		}
	}
	t.Setenv("OPENAI_API_KEY", "")
	if _, err := Parse(t.Context(), "openai:text-embedding-3-small"); !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("no key: %v, want ErrNoAPIKey", err)
	}
}
