package postgres

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// TestOpenURL opens the test server by store URL, with ?table= taken by
// the driver, ?history= by the store and the other parameters passed on
// to pgx, under both schemes, and writes and reads through the store.
func TestOpenURL(t *testing.T) {
	base := testURL(t)
	for _, scheme := range []string{"postgres", "postgresql"} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			t.Fatalf("%s must be a postgres:// URL for this test", "AGENTMEM_POSTGRES_URL")
		}
		u.Scheme = scheme
		table := uniqueTable(t, base)
		q := u.Query()
		q.Set("table", table)
		q.Set("application_name", "agentmem-url-test")
		q.Set("history", "30d")
		u.RawQuery = q.Encode()

		s, err := store.Open(t.Context(), u.String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		d := s.Driver().(*Driver)
		if d.Table() != table || !d.owned {
			t.Errorf("table %q owned %v, want %q owned", d.Table(), d.owned, table)
		}
		if got := d.Pool().Config().ConnConfig.RuntimeParams["application_name"]; got != "agentmem-url-test" {
			t.Errorf("application_name = %q: the other parameters must reach pgx", got)
		}
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "by URL"}); err != nil {
			t.Fatal(err)
		}
		if f, err := s.Read(t.Context(), "u/a.md", 100); err != nil || f.Content != "by URL" {
			t.Fatalf("read = %+v, %v", f, err)
		}
		if h, err := s.History(t.Context(), store.HistoryRequest{Path: "u/a.md", Limit: 10}); err != nil || len(h.Entries) != 1 || h.Entries[0].Content != "by URL" {
			t.Fatalf("history = %+v, %v", h, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if d.Pool().Stat().TotalConns() != 0 {
			t.Error("Close left the pool it opened open")
		}
	}
}

// TestOpenURLErrors checks bad table parameters and that no error repeats
// a password.
func TestOpenURLErrors(t *testing.T) {
	for _, u := range []string{"postgres://u@localhost/db?table=", "postgres://u@localhost/db?table=a&table=b", "postgres://u@localhost/db?%zz"} {
		if _, err := store.Open(t.Context(), u, nil); !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want store.ErrInvalidURL", u, err)
		}
	}
	if _, err := store.Open(t.Context(), "postgres://u@localhost/db?table=1x", nil); !errors.Is(err, ErrInvalidTable) {
		t.Errorf("bad table: %v, want ErrInvalidTable", err)
	}
	for _, u := range []string{
		"postgres://kamal:s3cret@localhost:notaport/db",
		"postgres://kamal@localhost:notaport/db?password=s3cret&table=t",
	} {
		_, err := store.Open(t.Context(), u, nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) = %v, want an error without the password", u, err)
		}
	}
	if _, err := openPool(t.Context(), "", nil); err == nil {
		t.Error(`openPool("") succeeded`)
	}
}
