package cosmosdb_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
)

// TestOpenURL opens the emulator by store URL (key from the environment,
// insecure=1 for its http endpoint), creating the database and container,
// and writes and reads through it.
func TestOpenURL(t *testing.T) {
	endpoint, err := url.Parse(emulator.Require(t, emulator.CosmosEndpoint))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cosmosdb.KeyEnv, emulator.Require(t, emulator.CosmosKey))
	db := newDatabase(t)
	u := "cosmosdb://" + endpoint.Host + "/" + db.name + "/by-url"
	if endpoint.Scheme == "http" {
		u += "?insecure=1"
	}
	s, err := store.Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Driver().(*cosmosdb.Driver).Container().ID(); got != "by-url" {
		t.Errorf("container %q", got)
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/main/a.md", Content: "by URL"}); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Read(t.Context(), "u/main/a.md", 100); err != nil || f.Content != "by URL" {
		t.Fatalf("read = %+v, %v", f, err)
	}
}

func TestOpenURLErrors(t *testing.T) {
	t.Setenv(cosmosdb.KeyEnv, "")
	if _, err := store.Open(t.Context(), "cosmosdb://acct.documents.azure.com/db/c", nil); !errors.Is(err, cosmosdb.ErrNoKey) {
		t.Errorf("no key: %v, want ErrNoKey", err)
	}
	for _, u := range []string{
		"cosmosdb://acct.documents.azure.com/db",
		"cosmosdb://acct.documents.azure.com/db/c/extra",
		"cosmosdb:///db/c",
		"cosmosdb://acct.documents.azure.com//c",
		"cosmosdb://me:s3cret@acct.documents.azure.com/db/c",
		"cosmosdb://acct.documents.azure.com/db/c?insecure=maybe",
		"cosmosdb://acct.documents.azure.com/db/c?key=s3cret",
	} {
		_, err := store.Open(t.Context(), u, nil)
		if !errors.Is(err, store.ErrInvalidURL) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) = %v, want store.ErrInvalidURL without the secret", u, err)
		}
	}
	// The message says what to write (the redacted URL drops the query).
	if _, err := store.Open(t.Context(), "cosmosdb://acct.documents.azure.com/db/c?insecure=maybe", nil); err == nil ||
		!strings.Contains(err.Error(), "set insecure=1 for an emulator's http endpoint, or insecure=0") {
		t.Errorf("insecure=maybe: %v, want it to say what insecure takes", err)
	}
	t.Setenv(cosmosdb.KeyEnv, "s3cret not base64")
	if _, err := store.Open(t.Context(), "cosmosdb://acct.documents.azure.com/db/c", nil); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("bad key: %v, want an error without the key", err)
	}
}
